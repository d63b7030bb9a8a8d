package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/demo"
)

// TestDemo runs kiln demo end to end as a newcomer would: a real c2x86
// campaign over six built-in corpus functions answered by the embedded
// replay, verified in the sandbox; then the report with its chart, the
// dataset folder and the dashboard line. A rerun in the same folder adds a
// fresh campaign; a folder that holds something else is refused.
func TestDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "kd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	code, out, errs := runKiln(t, ctx, "demo", "--data", data)
	t.Logf("kiln demo: %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("kiln demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{
		"campaign ", ": 6 tasks, 6 done, 4 pass, 2 fail, 0 pending, 0 task faults, 0 queued",
		"$ kiln report --data " + data, "$ kiln export --data " + data,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`\(all\)\s+6\s+4\s+2\s+0\s+0\s+66\.7%`).MatchString(out) {
		t.Errorf("report has no (all) row of 6 tasks, 4 pass, 2 fail:\n%s", out)
	}
	for _, row := range []string{`bit_007_parity +pass +0 +1`, `int_026_abs_diff_u +pass +1 +0`, `int_013_digital_root +fail: wrong_output +1 +0`} {
		if !regexp.MustCompile(`(?m)^` + row + `$`).MatchString(out) {
			t.Errorf("no task line %q:\n%s", row, out)
		}
	}
	id := demoDashboardID(t, out, data)
	checkDemoStore(t, ctx, data, id)
	checkDemoDataset(t, data)
	svg, err := os.ReadFile(filepath.Join(data, "report.svg"))
	if err != nil || !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "float_const") {
		t.Errorf("report.svg: %v\n%.300s", err, svg)
	}

	// Again in the same folder, with --serve: a fresh campaign beside the
	// first, then the dashboard on it until a soft stop.
	out2, id2 := serveDemo(ctx, t, data)
	if !strings.Contains(out2, "holds an earlier demo") || !strings.Contains(out2, "4 pass, 2 fail") {
		t.Errorf("rerun:\n%s", out2)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	camps, err := st.ListCampaigns(ctx)
	st.Close()
	if err != nil || len(camps) != 2 || id2 == id || camps[0].ID != id2 {
		t.Errorf("after the rerun: %d campaigns (%v), dashboard ids %s then %s", len(camps), err, id, id2)
	}

	// A folder holding something else is refused, untouched.
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runKiln(t, ctx, "demo", "--data", other)
	ents, _ := os.ReadDir(other)
	if code != exitBadInput || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "holds no earlier demo") || len(ents) != 1 {
		t.Errorf("demo in a foreign folder: exit %d, %d entries after, stderr:\n%s", code, len(ents), errs)
	}
}

// serveDemo runs kiln demo --serve on data, fetches the campaign page the
// dashboard line names, stops the server softly and returns the output and
// the campaign id.
func serveDemo(ctx context.Context, t *testing.T, data string) (string, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	out, soft, done := &syncBuffer{}, make(chan struct{}), make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--data", data, "--serve", "--addr", addr},
			env{stdin: strings.NewReader(""), stdout: out, stderr: out, getenv: testGetenv, soft: soft})
	}()
	line := regexp.MustCompile(`then open (http://` + regexp.QuoteMeta(addr) + `/campaigns/([0-9a-f-]{36}))`)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("kiln demo --serve exited %d:\n%s", code, out.String())
		default:
		}
		if m := line.FindStringSubmatch(out.String()); m != nil {
			if resp, err := http.Get(m[1]); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					if !strings.Contains(string(body), "float_const") {
						t.Errorf("campaign page lacks the categories:\n%.500s", body)
					}
					close(soft)
					if code := <-done; code != 0 {
						t.Errorf("kiln demo --serve: exit %d after a soft stop:\n%s", code, out.String())
					}
					return out.String(), m[2]
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard served:\n%s", out.String())
		}
	}
}

// demoDashboardID checks the dashboard line and returns its campaign id.
func demoDashboardID(t *testing.T, out, data string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^dashboard: +kiln serve --data (\S+), then open http://127\.0\.0\.1:7878/campaigns/([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if m == nil || m[1] != data {
		t.Fatalf("no dashboard line for %s:\n%s", data, out)
	}
	return m[2]
}

// checkDemoStore compares every stored result with the replay's story:
// three right answers (one after a run_tests tool call), one repaired, two
// that stay wrong (one failed to assemble first).
func checkDemoStore(t *testing.T, ctx context.Context, data, id string) {
	t.Helper()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := st.Results(ctx, id, -1)
	if err != nil || len(res) != 6 {
		t.Fatalf("campaign %s: %d results, %v", id, len(res), err)
	}
	want := map[string]struct {
		pass           bool
		class          string
		repairs, tools int
		transcript     string // the transcript holds this
	}{
		"gcd_u":        {pass: true},
		"poly_eval":    {pass: true, transcript: `.double\t3e-5`},
		"parity64":     {pass: true, tools: 1, transcript: "PASS: the program's output matches the reference"},
		"abs_diff_i64": {pass: true, repairs: 1, transcript: "failure: wrong_output"},
		"drag_force":   {class: "wrong_output", repairs: 1, transcript: "failure: wrong_output"},
		"digital_root": {class: "wrong_output", repairs: 1, transcript: "failure: assemble_error"},
	}
	for _, r := range res {
		fn := r.Task.Meta["function"]
		w, ok := want[fn]
		if !ok {
			t.Errorf("unexpected task %s (%s)", r.Task.Key, fn)
			continue
		}
		v := r.Verdict
		if v.Pass != w.pass || string(v.Class) != w.class || r.Attempt.RepairTurns != w.repairs || r.Attempt.ToolCalls != w.tools {
			t.Errorf("%s: pass %v class %q repairs %d tool calls %d, want %+v (%s)", fn, v.Pass, v.Class,
				r.Attempt.RepairTurns, r.Attempt.ToolCalls, w, v.Diagnostic)
		}
		if w.transcript != "" && !strings.Contains(string(r.Attempt.Transcript), w.transcript) {
			t.Errorf("%s: transcript lacks %q", fn, w.transcript)
		}
		delete(want, fn)
	}
	for fn := range want {
		t.Errorf("%s: no result", fn)
	}
}

// checkDemoDataset reads the exported dataset folder: the four verified
// samples, the tool call and the repair turn kept in their trajectories.
func checkDemoDataset(t *testing.T, data string) {
	t.Helper()
	ds := filepath.Join(data, "dataset")
	for _, f := range []string{"dataset_info.json", "README.md", "train.jsonl"} {
		if st, err := os.Stat(filepath.Join(ds, f)); err != nil || st.Size() == 0 {
			t.Errorf("dataset file %s: %v", f, err)
		}
	}
	recs := readRecords(t, filepath.Join(ds, "train.jsonl"))
	if _, err := os.Stat(filepath.Join(ds, "validation.jsonl")); err == nil {
		recs = append(recs, readRecords(t, filepath.Join(ds, "validation.jsonl"))...)
	}
	roles := map[string][]string{}
	for _, r := range recs {
		task, _ := r["task"].(string)
		msgs, _ := r["messages"].([]any)
		for _, m := range msgs {
			role, _ := m.(map[string]any)["role"].(string)
			roles[task] = append(roles[task], role)
		}
	}
	want := map[string][]string{
		"int_001_gcd_unsigned": {"system", "user", "assistant"},
		"flt_003_horner_poly":  {"system", "user", "assistant"},
		"bit_007_parity":       {"system", "user", "assistant", "tool", "assistant"},
		"int_026_abs_diff_u":   {"system", "user", "assistant", "user", "assistant"},
	}
	if len(roles) != len(want) {
		t.Errorf("dataset tasks %v, want %d", roles, len(want))
	}
	for task, w := range want {
		if !slices.Equal(roles[task], w) {
			t.Errorf("dataset %s: roles %v, want %v", task, roles[task], w)
		}
	}
}

// TestDemoAnswerTwins: each answer the replay gets right has a broken twin
// (one instruction or constant changed) that the c2x86 verifier fails, so
// the demo's passes are the lane's judgement, not the replay's.
func TestDemoAnswerTwins(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, item, from, to, class string
	}{
		{"gcd_u.s", "int_001_gcd_unsigned", "xorl\t%edx, %edx", "movl\t%eax, %edx", "crash"},
		{"poly_eval.s", "flt_003_horner_poly", ".LC1:\t.double\t1.25", ".LC1:\t.double\t1.5", "wrong_output"},
		{"parity64.s", "bit_007_parity", "$0x6996", "$0x9669", "wrong_output"},
		{"abs_diff_i64.s", "int_026_abs_diff_u", "jge", "jae", "wrong_output"},
	}
	dir := t.TempDir()
	sharedCaches(t, filepath.Join(dir, "data"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range cases {
		right, err := demo.Answer(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(right), c.from) {
			t.Fatalf("%s lacks %q", c.file, c.from)
		}
		it := corpusItem(t, c.item)
		d := filepath.Join(dir, c.item)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		write := func(name, body string) string {
			p := filepath.Join(d, name)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		fn, drv := write("function.c", it.Files["function.c"]), write("driver.c", it.Files["driver.c"])
		for _, v := range []struct {
			name, asm string
			code      int
		}{{"right.s", string(right), exitOK}, {"twin.s", strings.Replace(string(right), c.from, c.to, 1), exitFail}} {
			code, out, errs := runKiln(t, ctx, "verify", "c2x86", "--data", filepath.Join(dir, "data"),
				"--function", fn, "--driver", drv, "--candidate", write(v.name, v.asm), "--json")
			if code != v.code || (v.code == exitFail && !strings.Contains(out, `"class": "`+c.class+`"`)) {
				t.Errorf("%s %s: exit %d, want %d (class %s)\n%s\n%s", c.file, v.name, code, v.code, c.class, out, errs)
			}
		}
	}
}
