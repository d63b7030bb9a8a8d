package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// The golden campaigns pin kiln's observable behaviour per lane: the same
// script-model campaigns must give the same verdicts, labels, reports,
// refinement plans, synthesiser prompts and exports, whatever the code
// behind them. The golden files were written by the code before the lane
// kits (issue 8) and are compared after it. Regenerate them only for a
// deliberate change of behaviour: go test ./cmd/kiln -run TestGolden -update
//
// Volatile values are normalised away: ids, times, durations, latencies,
// compile counts (a race between parallel compiles and cancellation),
// the toolchain and policy strings of the host, the temp folders, and the
// hashes of executables (nvcc does not build them byte for byte alike).

var updateGolden = flag.Bool("update", false, "rewrite the golden files of TestGolden")

// TestGoldenC2X86 runs the refinement fixture's campaign (refine_test.go)
// once: its golden file, then checkRefineCampaign's hand computation,
// kiln refine --plan and kiln refine on it.
func TestGoldenC2X86(t *testing.T) {
	t.Parallel()
	f := newRefineFixture(t, "golden-c2x86", "", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if code, out, errs := runKiln(t, ctx, "run", "--data", f.data, "--log-level", "warn", f.spec); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	g := goldenOf(t, ctx, f.data, "golden-c2x86", f.dir)
	f.synth.mu.Lock()
	g["synth_prompts"] = normaliseAny(f.synth.prompts, f.dir)
	f.synth.mu.Unlock()
	compareGolden(t, "c2x86", g)
	// The same campaign, checked against the hand computation, then
	// planned and forked (refine_test.go): one run of the fixture's 48
	// tasks serves both.
	checkRefineCampaign(t, ctx, f, "golden-c2x86")
}

func TestGoldenCUDASynth(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles CUDA programs")
	}
	for _, tool := range []string{"nvcc", "cuobjdump", "hipcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	progs := map[string]string{}
	for _, it := range items {
		progs[it.ID] = it.Program
	}
	dir := t.TempDir()
	fence := func(src string) string { return "```cuda\n" + src + "```" }
	// The corpus campaign (the draw of seed 11): one program right, one that
	// does not build, one the translator refuses (inline PTX, answering
	// another task); the template campaign: every
	// statement answered by a program nvcc rejects.
	var rules []string
	for _, r := range [][2]string{
		{`\(task sim_01_cloth_mass_spring\)`, fence(progs["sim_01_cloth_mass_spring"])},
		{`\(task crypto_05_rlwe_homomorphic\)`, fence(progs["crypto_03_mining_ptx_rotate"])},
		{`.`, fence(cudaBroken)},
	} {
		b, _ := json.Marshal(map[string]string{"match": r[0], "response": r[1]})
		rules = append(rules, string(b))
	}
	script := filepath.Join(dir, "solver.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synth := &fakeSynth{t: t, prompts: map[string][]string{}, arrived: make(chan string, 1), replies: map[string]string{}}
	srv := httptest.NewServer(synth)
	t.Cleanup(srv.Close)
	data := filepath.Join(dir, "data")
	// A cold compile cache of its own: the stage details say "(cached)"
	// on a hit, and the golden file has none.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	g := map[string]any{}
	for _, c := range []struct{ name, tasks string }{
		{"golden-cuda-corpus", "{corpus: builtin, categories: [simulation, cryptography_security, basic_operations], limit: 3, seed: 11}"},
		{"golden-cuda-templates", "{templates: {dir: builtin}, limit: 3, seed: 7, samples_per_task: 2, categories: [simulation, sparse_operations]}"},
	} {
		specText := fmt.Sprintf(`name: %s
lane: cuda-synth
tasks: %s
models:
  - {name: solver, kind: script, script: %s}
  - {name: synth, kind: openai, base_url: %s/v1, model: synth-test, concurrency: 1}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
retry: {max_attempts: 2, base_delay: 5ms, max_delay: 20ms}
refinement: {factor: 4, synthesizer: synth}
`, c.name, c.tasks, script, srv.URL)
		specPath := filepath.Join(dir, c.name+".yaml")
		if err := os.WriteFile(specPath, []byte(specText), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath); code != 0 {
			t.Fatalf("kiln run %s: exit %d\n%s\n%.3000s", c.name, code, out, errs)
		}
		g[c.name] = goldenOf(t, ctx, data, c.name, dir)
	}
	compareGolden(t, "cuda-synth", g)
}

// goldenOf collects a finished campaign's report, next-round plan and
// export (every result, texts inlined), normalised.
func goldenOf(t *testing.T, ctx context.Context, data, name, tmp string) map[string]any {
	t.Helper()
	g := map[string]any{}
	for _, v := range []struct {
		key  string
		args []string
	}{
		{"report", []string{"report", "--data", data, "--json", name}},
		{"report_text", []string{"report", "--data", data, name}},
		{"plan", []string{"refine", "--data", data, "--plan", "--json", name}},
		{"export", []string{"export", "--data", data, "--all", name}},
	} {
		code, out, errs := runKiln(t, ctx, v.args...)
		if code != 0 {
			t.Fatalf("kiln %s: exit %d\n%.3000s", strings.Join(v.args, " "), code, errs)
		}
		switch v.key {
		case "report_text":
			g[v.key] = normaliseText(out, tmp)
		case "export":
			var rows []any
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var x any
				if err := json.Unmarshal([]byte(line), &x); err != nil {
					t.Fatalf("export line: %v", err)
				}
				rows = append(rows, normaliseAny(x, tmp))
			}
			// Rows in task-key order: the export's order is the store's.
			sort.SliceStable(rows, func(i, j int) bool { return sampleKey(rows[i]) < sampleKey(rows[j]) })
			g[v.key] = rows
		default:
			var x any
			if err := json.Unmarshal([]byte(out), &x); err != nil {
				t.Fatalf("%s JSON: %v", v.key, err)
			}
			g[v.key] = normaliseAny(x, tmp)
		}
	}
	return g
}

func sampleKey(x any) string {
	m, _ := x.(map[string]any)
	k, _ := m["task_key"].(string)
	return k
}

// volatileKeys are JSON keys whose values differ from run to run.
var volatileKeys = map[string]bool{
	"id": true, "task_id": true, "created_at": true, "updated_at": true, "started_at": true, "finished_at": true,
	"duration_ns": true, "latency_ms": true, "time": true, "toolchain": true, "policy": true, "worker": true,
	"campaign": true, "parent": true, "verdict_id": true, "attempt_id": true, "endpoint": true,
	"run_ms": true, "cuda_run_ms": true, "hip_run_ms": true,
	// How many of a failing program's compiles ran (and hit the cache)
	// before the failure cancelled the rest depends on timing.
	"compiles": true, "compiles_cached": true,
}

var (
	idRE  = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	durRE = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|µs|ns)\b`)
	urlRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
)

func normaliseText(s, tmp string) string {
	s = strings.ReplaceAll(s, tmp, "$TMP")
	s = idRE.ReplaceAllString(s, "$$ID")
	s = urlRE.ReplaceAllString(s, "$$URL")
	return durRE.ReplaceAllString(s, "$$DUR")
}

func normaliseAny(x any, tmp string) any {
	switch v := x.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if volatileKeys[k] || strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_binary") || strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "_ns") {
				continue
			}
			out[k] = normaliseAny(e, tmp)
		}
		return out
	case map[string][]string:
		out := map[string]any{}
		for k, e := range v {
			out[k] = normaliseAny(e, tmp)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normaliseText(e, tmp)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normaliseAny(e, tmp)
		}
		return out
	case string:
		return normaliseText(v, tmp)
	}
	return x
}

// compareGolden compares g with testdata/golden/<name>.json (or writes it
// with -update), and names the first differing paths.
func compareGolden(t *testing.T, name string, g map[string]any) {
	t.Helper()
	got, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", name+".json")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (write it with -update)", err)
	}
	if bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(got)) {
		return
	}
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	var gg any
	if err := json.Unmarshal(got, &gg); err != nil {
		t.Fatal(err)
	}
	// Keys made volatile after the file was written are dropped from
	// it too, so that a new volatile key needs no -update.
	w = normaliseAny(w, "\x00")
	var diffs []string
	diffJSON("", w, gg, &diffs)
	if len(diffs) == 0 {
		return
	}
	if len(diffs) > 20 {
		diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
	}
	t.Errorf("%s differs from the golden file %s:\n%s", name, path, strings.Join(diffs, "\n"))
}

func diffJSON(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: want an object, got %.200v", path, got))
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffJSON(path+"."+k, w[k], g[k], out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s: want %d elements, got %.300v", path, len(w), got))
			return
		}
		for i := range w {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], out)
		}
	default:
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if !bytes.Equal(wb, gb) {
			*out = append(*out, fmt.Sprintf("%s:\n  want %.400s\n  got  %.400s", path, wb, gb))
		}
	}
}
