package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// storeCampaign writes a done campaign of lane into data whose task i
// (key "r0/<key>#0", categories cats[i]) gets verdict vs[i].
func storeCampaign(t *testing.T, data, name, lane string, keys []string, cats [][]string, vs []runs.Verdict) {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: name, Lane: lane, Spec: []byte("name: " + name + "\nlane: " + lane + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []runs.Task
	for i, k := range keys {
		tasks = append(tasks, runs.Task{Key: "r0/" + k + "#0", Lane: lane, Categories: cats[i]})
	}
	if _, err := st.AddTasks(ctx, c.ID, tasks); err != nil {
		t.Fatal(err)
	}
	if err := st.SetCampaignState(ctx, c.ID, runs.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	for range keys {
		l, err := st.Claim(ctx, c.ID, "w", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for i < len(keys) && "r0/"+keys[i]+"#0" != l.Task.Key {
			i++
		}
		a := runs.Attempt{Model: "m", Answer: "answer " + keys[i], Usage: runs.Usage{PromptTokens: 10, CompletionTokens: 5}}
		if err := st.Finish(ctx, l, a, vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetCampaignState(ctx, c.ID, runs.CampaignDone, ""); err != nil {
		t.Fatal(err)
	}
}

var pendingVerdict = runs.Verdict{Pass: true, Stage: "compile",
	Stages: []byte(`[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true,"detail":"no GPU"}]`)}

// TestReportPendingOnly: a campaign whose GPU stages have not run has no
// pass rate (none, "-"), not 100%, in every view.
func TestReportPendingOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	storeCampaign(t, data, "gpu-wait", "cuda-synth", []string{"a", "b", "c"},
		[][]string{{"simulation"}, {"simulation"}, {"graph"}}, []runs.Verdict{pendingVerdict, pendingVerdict, pendingVerdict})

	code, out, errs := runKiln(t, ctx, "report", "--data", data, "gpu-wait")
	if code != 0 {
		t.Fatalf("kiln report: exit %d %s", code, errs)
	}
	// CATEGORY TASKS PASS FAIL PENDING TASK FAULTS RATE 95% CI
	if !regexp.MustCompile(`\(all\)\s+3\s+0\s+0\s+3\s+0\s+-\s+-\s`).MatchString(out) || strings.Contains(out, "100.0%") ||
		!strings.Contains(out, "RATE = PASS / (PASS + FAIL)") || !strings.Contains(out, "not a pass yet") {
		t.Errorf("kiln report of pending-only results:\n%s", out)
	}
	code, out, errs = runKiln(t, ctx, "report", "--data", data, "--json", "gpu-wait")
	if code != 0 {
		t.Fatalf("kiln report --json: exit %d %s", code, errs)
	}
	var rep struct {
		Categories []map[string]any `json:"categories"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Categories {
		if c["pass"] != 0.0 || c["pending"] == 0.0 || c["judged"] != 0.0 || c["pass_rate"] != nil {
			t.Errorf("report JSON category %v: want pass 0, pending apart, pass_rate null", c)
		}
	}
	code, out, _ = runKiln(t, ctx, "status", "--data", data, "--json", "gpu-wait")
	var status []struct{ Counts runs.Counts }
	if err := json.Unmarshal([]byte(out), &status); code != 0 || err != nil || len(status) != 1 ||
		status[0].Counts.Pass != 0 || status[0].Counts.Pending != 3 {
		t.Errorf("kiln status --json: exit %d %v %s", code, err, out)
	}
	// Pending results are no samples unless asked for, and never "pass".
	code, out, _ = runKiln(t, ctx, "export", "--data", data, "--all", "gpu-wait")
	if code != 0 || strings.Count(out, `"pending":true`) != 6 || strings.Contains(out, `"pass":true`) {
		t.Errorf("kiln export --all: exit %d\n%.2000s", code, out)
	}
}

// TestReportTaskFaults: a task whose reference failed is a task fault: not
// a pass, not a failure, listed with its reason, never exported.
func TestReportTaskFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	fault := func(reason string) runs.Verdict {
		return runs.Verdict{Class: runs.ClassReferenceError, Stage: "reference", Diagnostic: reason + "\nmore detail"}
	}
	storeCampaign(t, data, "kb", "torch2cuda", []string{"sigmoid", "huber", "relu", "gelu"},
		[][]string{{"level1"}, {"level1"}, {"level1"}, {"level1"}},
		[]runs.Verdict{fault("reference timed out after 120s"), fault("reference killed: out of memory"),
			{Pass: true, Stage: "judge"}, {Class: "wrong_output", Stage: "judge", Diagnostic: "max abs err 3"}})

	code, out, errs := runKiln(t, ctx, "report", "--data", data, "kb")
	if code != 0 {
		t.Fatalf("kiln report: exit %d %s", code, errs)
	}
	for _, want := range []string{"TASK FAULTS", "task faults (2;", "r0/huber#0  reference: reference killed: out of memory",
		"r0/sigmoid#0  reference: reference timed out after 120s"} {
		if !strings.Contains(out, want) {
			t.Errorf("kiln report lacks %q:\n%s", want, out)
		}
	}
	// 1 pass of 2 judged: 50%; the failure classes hold no reference_error.
	if !regexp.MustCompile(`\(all\)\s+4\s+1\s+1\s+0\s+2\s+50\.0%`).MatchString(out) || strings.Contains(out, "reference_error 2") {
		t.Errorf("kiln report:\n%s", out)
	}
	code, out, _ = runKiln(t, ctx, "report", "--data", data, "--json", "kb")
	var rep struct {
		TaskFaults []struct {
			TaskKey string `json:"task_key"`
			Reason  string `json:"reason"`
		} `json:"task_faults"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.TaskFaults) != 2 || rep.TaskFaults[0].TaskKey != "r0/huber#0" {
		t.Errorf("report JSON task faults: %+v %v", rep.TaskFaults, err)
	}
	code, out, _ = runKiln(t, ctx, "status", "--data", data, "kb")
	// ... TASKS DONE PASS FAIL PENDING TASK FAULTS QUEUED
	if code != 0 || !regexp.MustCompile(`kb\s+torch2cuda\s+done\s+4\s+4\s+1\s+1\s+0\s+2\s+0\s`).MatchString(out) {
		t.Errorf("kiln status: exit %d\n%s", code, out)
	}
	code, out, _ = runKiln(t, ctx, "export", "--data", data, "--all", "kb")
	if code != 0 || strings.Count(out, "\n") != 2 || strings.Contains(out, "reference_error") {
		t.Errorf("kiln export --all: exit %d, want the pass and the failure only\n%.1000s", code, out)
	}
}

// TestRepairCallFailureKeepsClass: an OpenAI-compatible server answers a
// task wrong, then fails every later call (HTTP 500 forever; for another
// task, a connection dropped mid-stream): the task is judged by the real
// failure class, not model_error, and the failed call is one model fault.
func TestRepairCallFailureKeepsClass(t *testing.T) {
	t.Parallel()
	bs := []behaviour{
		{id: "bit_001_popcount", turns: []string{"right"}, pass: true},
		{id: "bit_007_parity", turns: []string{"wrong"}, fault: ",500x20", class: "wrong_output", repairs: 1},
		{id: "bit_012_xorshift", turns: []string{"garbage"}, fault: ",truncatex20", class: "assemble_error", repairs: 1},
	}
	f := newFakeLLM(t, bs)
	srv := httptest.NewServer(f.openai())
	defer srv.Close()
	dir := t.TempDir()
	ids := []string{bs[0].id, bs[1].id, bs[2].id}
	specPath := writeSpec(t, dir, "repairfault", fmt.Sprintf(`  - {name: vllm, kind: openai, base_url: %s/v1, model: qwen-test, concurrency: 2, timeout: 5s}`, srv.URL), ids)
	// One try per call, so that each failed repair call is one fault.
	b, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(string(b), "max_attempts: 3", "max_attempts: 1", 1)
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data) // TestLLMFaults judges the same items first
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	checkResults(t, data, "repairfault", f, bs, 100, 50)
	f.mu.Lock()
	if f.requests[funcOf(t, bs[1].id)] != 2 || f.requests[funcOf(t, bs[2].id)] != 2 {
		t.Errorf("requests %v: want the answer and one failed repair call per faulty task (no requeue)", f.requests)
	}
	f.mu.Unlock()

	code, out, errs = runKiln(t, ctx, "report", "--data", data, "repairfault")
	if code != 0 {
		t.Fatalf("kiln report: exit %d %s", code, errs)
	}
	t.Logf("kiln report:\n%s", out)
	for _, want := range []string{"server_error 1", "truncated 1",
		"attempts ended by a failed model call: 2 (2 kept the class of the answer judged before it, 0 model_error)"} {
		if !strings.Contains(out, want) {
			t.Errorf("kiln report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "model_error 1") || !regexp.MustCompile(`\(all\)\s+3\s+1\s+2\s+0\s+0\s+33\.3%.*(assemble_error 1, wrong_output 1|wrong_output 1, assemble_error 1)`).MatchString(out) {
		t.Errorf("kiln report: want the real classes, not model_error:\n%s", out)
	}
	code, out, _ = runKiln(t, ctx, "report", "--data", data, "--json", "repairfault")
	var rep struct {
		ModelFaults     map[string]int `json:"model_faults"`
		FaultedAttempts struct {
			Total     int `json:"total"`
			KeptClass int `json:"kept_class"`
		} `json:"faulted_attempts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.ModelFaults["server_error"] != 1 ||
		rep.ModelFaults["truncated"] != 1 || rep.FaultedAttempts.Total != 2 || rep.FaultedAttempts.KeptClass != 2 {
		t.Errorf("report JSON: %+v %v", rep, err)
	}
}

// funcOf is the function name of a c2x86 corpus item.
func funcOf(t *testing.T, id string) string { return corpusItem(t, id).Function }

// TestVerifyPendingExitsThree: cuda-synth and cuda2hip on a host without a
// GPU leave the run stage pending: exit 3, "pass": false, "pending": true,
// as every lane's verify does.
func TestVerifyPendingExitsThree(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles CUDA and HIP programs")
	}
	for _, tool := range []string{"nvcc", "hipcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	if _, err := exec.LookPath("nvidia-smi"); err == nil {
		t.Skip("a GPU host may run the stage: this test is for hosts without one")
	}
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	// The program TestCUDA2HIPCampaign and TestRecordsIntoTranslationLanes
	// build too (the shared compile cache holds its builds when they ran
	// first).
	var prog string
	for _, it := range items {
		if it.ID == "basic_01_reduce_sum_shfl" {
			prog = it.Program
		}
	}
	if prog == "" {
		t.Fatal("corpus item basic_01_reduce_sum_shfl not found")
	}
	hip, err := hipify.Translate(prog)
	if err != nil || !hip.OK() {
		t.Fatalf("hipify: %v %+v", err, hip.Unsupported)
	}
	dir := t.TempDir()
	cu, hp := filepath.Join(dir, "p.cu"), filepath.Join(dir, "p.hip")
	if err := os.WriteFile(cu, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hp, []byte(hip.HIP), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"verify", "cuda-synth", "--data", data, "--source", cu, "--json"},
		{"verify", "cuda2hip", "--data", data, "--cuda", cu, "--hip", hp, "--json"},
	} {
		code, out, errs := runKiln(t, ctx, args...)
		var v struct {
			Pass          bool     `json:"pass"`
			Pending       bool     `json:"pending"`
			Class         string   `json:"class"`
			PendingStages []string `json:"pending_stages"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || code != 3 || v.Pass || !v.Pending || v.Class != "pending" || len(v.PendingStages) == 0 {
			t.Errorf("kiln %s: exit %d %+v %v\n%.2000s\n%.2000s", args[1], code, v, err, out, errs)
		}
		text := args[:len(args)-1]
		if code, out, _ := runKiln(t, ctx, text...); code != 3 || !strings.Contains(out, "PENDING") || strings.Contains(out, "PASS") {
			t.Errorf("kiln %s (text): exit %d\n%s", args[1], code, out)
		}
	}
}
