package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExportDataset runs a script-model c2x86 campaign on corpus items
// (two samples per task, so every answer has an exact duplicate; one
// task answered wrong; one answered after an assemble tool call) with a
// benchmark folder that leaks one task's input and another's answer, and
// exports it in every format.
func TestExportDataset(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: runs a campaign")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ids := []string{"int_007_is_leap_year", "bit_003_power_of_two", "flt_001_cost_split", "flt_002_celsius_to_fahrenheit", "sw_many_008_letter_grade"}
	corpus := filepath.Join(dir, "corpus")
	var rules []string
	rule := func(r map[string]any) {
		b, _ := json.Marshal(r)
		rules = append(rules, string(b))
	}
	leapAsm := ""
	for _, id := range ids {
		it := corpusItem(t, id)
		d := filepath.Join(corpus, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range it.Files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		meta, _ := json.Marshal(map[string]any{"function": it.Function, "categories": it.Categories})
		if err := os.WriteFile(filepath.Join(d, "meta.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		asm := gccAsm(t, it, "-O0")
		switch id {
		case "sw_many_008_letter_grade":
			asm = mutate(t, asm, it.Function)
		case "int_007_is_leap_year":
			// First an assemble call; the answer follows its "ok".
			leapAsm = asm
			args, _ := json.Marshal(map[string]string{"asm": asm})
			rule(map[string]any{"match": "`" + it.Function + "`", "response": "Let me assemble it first.",
				"reasoning": "I should check that it assembles.", "tool_calls": []map[string]any{{"name": "assemble", "arguments": json.RawMessage(args)}}})
			continue
		}
		rule(map[string]any{"match": "`" + it.Function + "`", "response": "Here it is.\n```asm\n" + asm + "```",
			"reasoning": "Compile " + it.Function + " at -O0 in my head, carefully."})
	}
	rules = append([]string{mustJSON(map[string]any{"match": `^ok$`, "response": "It assembles.\n```asm\n" + leapAsm + "```",
		"reasoning": "The assembler accepted it."})}, rules...)
	script := filepath.Join(dir, "solver.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The benchmark folder: flt_001's C source (an input leak) and
	// bit_003's assembly (an answer leak), plus an unrelated file.
	bench := filepath.Join(dir, "bench")
	os.MkdirAll(bench, 0o755)
	os.WriteFile(filepath.Join(bench, "cost_split.c"), []byte(corpusItem(t, "flt_001_cost_split").Files["function.c"]), 0o644)
	os.WriteFile(filepath.Join(bench, "power_of_two.s"), []byte(gccAsm(t, corpusItem(t, "bit_003_power_of_two"), "-O0")), 0o644)
	os.WriteFile(filepath.Join(bench, "other.c"), []byte(corpusItem(t, "int_011_avg3_no_overflow").Files["function.c"]), 0o644)

	spec := fmt.Sprintf(`name: export-ds
lane: c2x86
tasks: {corpus: %s, samples_per_task: 2}
models:
  - {name: solver, kind: script, script: %s}
concurrency: 4
sandbox: {wall_time: 2s, cpu_time: 3s}
agent: {repair_turns: 0, max_tool_calls: 2}
retry: {max_attempts: 2, base_delay: 5ms, max_delay: 20ms}
curation: {benchmarks: [bench], validation: 0}
`, corpus, script)
	specPath := filepath.Join(dir, "export-ds.yaml")
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath); code != 0 || !strings.Contains(out, "8 pass, 2 fail") {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}

	// 10 results, 8 passing: the 2 samples of flt_001 (input leak) and of
	// bit_003 (answer leak) are contaminated; of the other 4, each task's
	// second sample is an exact duplicate.
	for _, f := range []string{"messages", "sharegpt", "alpaca", "raw"} {
		out := filepath.Join(dir, "ds-"+f) + "/"
		args := []string{"export", "--data", data, "--format", f, "-o", out, "--think", "tags"}
		if f == "messages" || f == "sharegpt" {
			args = append(args, "--trajectories")
		}
		code, _, errs := runKiln(t, ctx, append(args, "export-ds")...)
		if code != 0 {
			t.Fatalf("export %s: exit %d %s", f, code, errs)
		}
		if !strings.Contains(errs, "exported 2 samples") || !strings.Contains(errs, "contaminated 4") || !strings.Contains(errs, "duplicate 2") || !strings.Contains(errs, "failing 2") {
			t.Errorf("export %s summary:\n%s", f, errs)
		}
		recs := readRecords(t, filepath.Join(out, "train.jsonl"))
		if len(recs) != 2 {
			t.Fatalf("%s: %d records", f, len(recs))
		}
		var tasks []string
		for _, r := range recs {
			switch f {
			case "messages":
				tasks = append(tasks, r["task"].(string))
				msgs := r["messages"].([]any)
				var roles []string
				for _, m := range msgs {
					roles = append(roles, m.(map[string]any)["role"].(string))
				}
				last := msgs[len(msgs)-1].(map[string]any)["content"].(string)
				if !strings.HasPrefix(last, "<think>\n") || !strings.Contains(last, "</think>\n\n") || !strings.Contains(last, "```asm") {
					t.Errorf("messages: final turn %q", last)
				}
				want := []string{"system", "user", "assistant"}
				if r["task"] == "int_007_is_leap_year" {
					want = []string{"system", "user", "assistant", "tool", "assistant"}
					call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
					if call["name"] != "assemble" || !strings.Contains(call["arguments"].(string), `"asm"`) || msgs[3].(map[string]any)["content"] != "ok" {
						t.Errorf("messages trajectory: call %v, result %v", call, msgs[3])
					}
				}
				if !slices.Equal(roles, want) {
					t.Errorf("messages %s: roles %v, want %v", r["task"], roles, want)
				}
			case "sharegpt":
				conv := r["conversations"].([]any)
				var from []string
				for _, m := range conv {
					from = append(from, m.(map[string]any)["from"].(string))
				}
				want := []string{"human", "gpt"}
				if r["task"] == "int_007_is_leap_year" {
					want = []string{"human", "function_call", "observation", "gpt"}
				}
				if !slices.Equal(from, want) || r["system"] == "" {
					t.Errorf("sharegpt %s: %v, system %q", r["task"], from, r["system"])
				}
			case "alpaca":
				if !strings.Contains(r["instruction"].(string), "x86-64") || !strings.Contains(r["output"].(string), "</think>") {
					t.Errorf("alpaca record %v", r)
				}
			case "raw":
				cur := r["curation"].(map[string]any)
				if r["pass"] != true || cur["selected"] != "all-verified" || cur["difficulty"] == "" {
					t.Errorf("raw record: pass %v curation %v", r["pass"], cur)
				}
			}
		}
		if f == "messages" {
			slices.Sort(tasks)
			if !slices.Equal(tasks, []string{"flt_002_celsius_to_fahrenheit", "int_007_is_leap_year"}) {
				t.Errorf("exported tasks %v", tasks)
			}
		}
		if f != "raw" {
			b, err := os.ReadFile(filepath.Join(out, "dataset_info.json"))
			var info map[string]map[string]any
			if err != nil || json.Unmarshal(b, &info) != nil || info["kiln_export_ds"]["file_name"] != "train.jsonl" {
				t.Errorf("%s: dataset_info.json %s %v", f, b, err)
			}
		}
		card, _ := os.ReadFile(filepath.Join(out, "README.md"))
		for _, want := range []string{"| c2x86 | 2 |", "4 samples matched a benchmark document", "| script:", "gcc"} {
			if !strings.Contains(string(card), want) {
				t.Errorf("%s: card lacks %q:\n%s", f, want, card)
			}
		}
		var cur struct {
			Matches []struct{ Task, Field, Benchmark string }
		}
		b, _ := os.ReadFile(filepath.Join(out, "curation.json"))
		if err := json.Unmarshal(b, &cur); err != nil || len(cur.Matches) != 4 {
			t.Fatalf("curation.json: %v %s", err, b)
		}
		for _, m := range cur.Matches {
			ok := (m.Task == "flt_001_cost_split" && m.Field == "input:function.c" && m.Benchmark == "bench/cost_split.c") ||
				(m.Task == "bit_003_power_of_two" && m.Field == "answer" && m.Benchmark == "bench/power_of_two.s")
			if !ok {
				t.Errorf("contamination match %+v", m)
			}
		}
	}

	// Flags override the spec: no dedup, contaminated kept, to stdout.
	code, out, errs := runKiln(t, ctx, "export", "--data", data, "--dedup=false", "--keep-contaminated", "export-ds")
	if code != 0 || strings.Count(out, "\n") != 8 || strings.Count(out, `"contamination":[`) != 4 {
		t.Errorf("export --dedup=false --keep-contaminated: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), errs)
	}
	// A required speed-up leaves out samples without one (c2x86 measures
	// none), counted by reason; so does a required stream.
	for _, args := range [][]string{{"--min-speedup", "1"}, {"--stream", "require"}} {
		code, out, errs = runKiln(t, ctx, append(append([]string{"export", "--data", data, "--dedup=false"}, args...), "export-ds")...)
		if code != 0 || strings.TrimSpace(out) != "" {
			t.Errorf("export %v: exit %d, %d lines, want none\n%s", args, code, strings.Count(out, "\n"), errs)
		}
	}
	// Bad input names the flag.
	for _, args := range [][]string{
		{"--stream", "sometimes"},
		{"--format", "jsonl"}, {"--think", "maybe"}, {"--select", "fastest"}, {"--all", "--format", "messages"},
		{"--format", "alpaca", "--trajectories"}, {"--against", filepath.Join(dir, "nope")}, {"--validation", "1.5", "-o", dir + "/v/"},
	} {
		code, _, errs := runKiln(t, ctx, append(append([]string{"export", "--data", data}, args...), "export-ds")...)
		if code != 2 && !(args[0] == "--against" && code != 0 && strings.Contains(errs, "nope")) {
			t.Errorf("export %v: exit %d, want 2 (bad input)\n%s", args, code, errs)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func readRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}
