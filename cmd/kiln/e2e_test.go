package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

func TestEndToEndOpenAI(t *testing.T) {
	t.Parallel()
	// Not parallel: each kiln run in this process makes its own sandbox runner.
	bs := []behaviour{
		{id: "int_001_gcd_unsigned", turns: []string{"right"}, pass: true},
		{id: "int_002_lcm_checked", turns: []string{"wrong", "right"}, pass: true, repairs: 1},
		{id: "int_003_isqrt_newton", turns: []string{"wrong"}, class: "wrong_output", repairs: 1},
		{id: "int_004_digit_sum", turns: []string{"garbage"}, class: "assemble_error", repairs: 1},
		{id: "int_005_reverse_digits", turns: []string{"hang"}, class: "timeout", repairs: 1},
		{id: "int_006_mod_pow", turns: []string{"tool", "right"}, pass: true, toolCalls: 1},
		{id: "int_007_is_leap_year", turns: []string{"right"}, fault: "429x2", pass: true},
		{id: "int_008_floor_div_mod", turns: []string{"right"}, fault: "500", pass: true},
		{id: "int_009_collatz_steps", turns: []string{"right"}, fault: "truncate", pass: true},
		{id: "int_010_sum_range", turns: []string{"prose"}, class: "no_answer", repairs: 1},
	}
	f := newFakeLLM(t, bs)
	srv := httptest.NewServer(f.openai())
	defer srv.Close()
	dir := t.TempDir()
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.id
	}
	specPath := writeSpec(t, dir, "e2e-openai", fmt.Sprintf(`  - {name: vllm, kind: openai, base_url: %s/v1, model: qwen-test, concurrency: 4}`, srv.URL), ids)
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	checkResults(t, data, "e2e-openai", f, bs, 100, 50)

	// The report and the export agree with the verdicts.
	code, out, errs = runKiln(t, ctx, "report", "--data", data, "--json", "e2e-openai")
	if code != 0 {
		t.Fatalf("kiln report: %d %s", code, errs)
	}
	var rep struct {
		Categories []struct {
			Category    string `json:"category"`
			Total, Pass int
		} `json:"categories"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report json: %v\n%s", err, out)
	}
	all := rep.Categories[len(rep.Categories)-1]
	if all.Category != "(all)" || all.Total != 10 || all.Pass != 6 {
		t.Errorf("report (all) row = %+v, want 10 tasks 6 pass", all)
	}
	exp := filepath.Join(dir, "samples.jsonl")
	if code, _, errs = runKiln(t, ctx, "export", "--data", data, "-o", exp, "e2e-openai"); code != 0 {
		t.Fatalf("kiln export: %d %s", code, errs)
	}
	fh, err := os.Open(exp)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	lines := 0
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines++
		if !strings.Contains(sc.Text(), `"pass":true`) {
			t.Errorf("exported a sample that is not verified: %.200s", sc.Text())
		}
	}
	if lines != 6 {
		t.Errorf("exported %d samples, want the 6 verified ones", lines)
	}
}

func TestEndToEndOllama(t *testing.T) {
	t.Parallel()
	// Not parallel: each kiln run in this process makes its own sandbox runner.
	bs := []behaviour{
		{id: "int_011_avg3_no_overflow", turns: []string{"right"}, pass: true},
		{id: "int_012_binomial", turns: []string{"wrong"}, class: "wrong_output", repairs: 1},
		{id: "int_013_digital_root", turns: []string{"tool", "right"}, pass: true, toolCalls: 1},
		{id: "int_014_count_divisors", turns: []string{"right"}, fault: "500", pass: true},
		{id: "int_015_is_prime", turns: []string{"right"}, fault: "truncate", pass: true},
		{id: "int_016_ext_gcd", turns: []string{"garbage", "right"}, pass: true, repairs: 1},
	}
	f := newFakeLLM(t, bs)
	srv := httptest.NewServer(f.ollama())
	defer srv.Close()
	dir := t.TempDir()
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.id
	}
	specPath := writeSpec(t, dir, "e2e-ollama", fmt.Sprintf(`  - {name: local, kind: ollama, base_url: %s, model: "qwen2.5-coder:7b", num_ctx: 16384, keep_alive: 5m, think: true, concurrency: 2}`, srv.URL), ids)
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	checkResults(t, data, "e2e-ollama", f, bs, 80, 40)

	// A model that is not pulled stops the campaign with a message naming
	// it; no task is judged, nothing is lost.
	specPath = writeSpec(t, dir, "e2e-ollama-missing", fmt.Sprintf(`  - {name: local, kind: ollama, base_url: %s, model: "nope:1b", num_ctx: 16384}`, srv.URL), ids[:2])
	code, out, errs = runKiln(t, ctx, "run", "--data", data, specPath)
	if code == 0 {
		t.Fatalf("campaign with a missing model succeeded: %s", out)
	}
	if !strings.Contains(errs, `"nope:1b"`) || !strings.Contains(errs, "ollama pull nope:1b") {
		t.Errorf("error does not name the missing model and the fix: %s", errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "e2e-ollama-missing")
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runs.CampaignFailed || n.Done != 0 || n.Queued != 2 {
		t.Errorf("missing model: state %s counts %+v, want failed with 2 tasks queued", c.State, n)
	}
}

// TestUnreachableEndpoint: every call fails to connect; the campaign stops
// as failed after a bounded number of attempts, with every task still queued.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	// Not parallel: each kiln run in this process makes its own sandbox runner.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	dir := t.TempDir()
	specPath := writeSpec(t, dir, "e2e-down", fmt.Sprintf(`  - {name: down, kind: openai, base_url: %s/v1, model: m, concurrency: 2}`, url),
		[]string{"int_001_gcd_unsigned", "int_002_lcm_checked", "int_003_isqrt_newton"})
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, _, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code == 0 || !strings.Contains(errs, "failed in a row") {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "e2e-down")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := st.Counts(ctx, c.ID, -1)
	if c.State != runs.CampaignFailed || n.Done != 0 || n.Queued != 3 {
		t.Errorf("state %s counts %+v", c.State, n)
	}
	st.Close()
	// Resume from another working directory: the spec's relative corpus
	// path still resolves against the spec's folder, and the campaign
	// fails again for the endpoint, not for a path.
	code, _, errs = runKiln(t, ctx, "resume", "--data", data, "e2e-down")
	if code == 0 || !strings.Contains(errs, "failed in a row") {
		t.Fatalf("resume: exit %d, stderr %s", code, errs)
	}
}

// TestBadSpec: kiln run names file, line and field of every problem, exits
// 2, and records nothing.
func TestBadSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.yaml")
	body := "name: bad\nlane: c2x86\nsampling: {temprature: 0.2}\nmodels:\n  - {name: m, kind: openai, model: x, concurrency: 0}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	code, _, errs := runKiln(t, context.Background(), "run", "--data", data, p)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, errs)
	}
	for _, want := range []string{"bad.yaml:3: sampling.temprature: unknown field", "bad.yaml:5: models[0].base_url", "bad.yaml:5: models[0].concurrency"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "kiln.db")); err == nil {
		t.Errorf("a bad spec created a run database")
	}
}

// TestGPUSlotsRefused: gpu.slots_per_device above 1 for a lane that runs
// one evaluation per GPU is refused, naming the field, before any task.
func TestGPUSlotsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "slots.yaml")
	body := "name: slots\nlane: c2x86\ntasks: {limit: 1}\ngpu: {slots_per_device: 2}\nmodels:\n  - {name: m, kind: openai, base_url: \"http://127.0.0.1:9/v1\", model: x}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runKiln(t, context.Background(), "run", "--data", filepath.Join(dir, "data"), p)
	if code != 2 || !strings.Contains(errs, "gpu.slots_per_device: lane c2x86 runs one evaluation per GPU at a time") {
		t.Fatalf("exit %d, want 2 and the field named:\n%s\n%s", code, out, errs)
	}
	// gpu.devices likewise
	body = strings.Replace(body, "slots_per_device: 2", "devices: 1", 1)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runKiln(t, context.Background(), "run", "--data", filepath.Join(dir, "data"), p)
	if code != 2 || !strings.Contains(errs, "gpu.devices: lane c2x86 does not spread its work over GPUs") {
		t.Fatalf("gpu.devices: exit %d, want 2 and the field named:\n%s\n%s", code, out, errs)
	}
}

// TestRescoreGPUFlags: rescore's --gpus and --slots-per-device out of range
// are bad input naming the flag, before the data folder is read.
func TestRescoreGPUFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range [][2]string{{"--gpus", "-1"}, {"--slots-per-device", "9"}, {"--slots-per-device", "-2"}} {
		code, _, errs := runKiln(t, context.Background(), "rescore", "--pending", "--data", t.TempDir(), tc[0], tc[1], "x")
		if code != 2 || !strings.Contains(errs, tc[0]+" "+tc[1]+": want") {
			t.Errorf("%s %s: exit %d, %s", tc[0], tc[1], code, errs)
		}
	}
}

// TestWorkerSlotsFlag: kiln worker --slots-per-device out of 1-8 is bad
// input naming the flag, before it connects anywhere.
func TestWorkerSlotsFlag(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "9"} {
		code, _, errs := runKiln(t, context.Background(), "worker", "--data", t.TempDir(), "--nats", "nats://127.0.0.1:9", "--slots-per-device", n)
		if code != 2 || !strings.Contains(errs, "--slots-per-device "+n+": want 1-8") {
			t.Errorf("--slots-per-device %s: exit %d, %s", n, code, errs)
		}
	}
	code, _, errs := runKiln(t, context.Background(), "worker", "--data", t.TempDir(), "--nats", "nats://127.0.0.1:9", "--gpus", "-1")
	if code != 2 || !strings.Contains(errs, "--gpus -1: want 1 or more") {
		t.Errorf("--gpus -1: exit %d, %s", code, errs)
	}
}
