package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/runs/web"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
	"github.com/kiln-dev/kiln/tools/ptx2cuda"
)

// TestPlanRetry: the next try of a verdict whose job failed, from the
// stored results of its tries and the time alone.
func TestPlanRetry(t *testing.T) {
	t.Parallel()
	const v = "0b7c2d4e-1111-4a2b-9c3d-5e6f7a8b9c0d"
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	res := func(try int, status string, at time.Duration) runs.JobResult {
		return runs.JobResult{JobID: engine.CompleteJobID(v, try), Kind: CompleteJobKind, Status: status,
			Reason: fmt.Sprintf("try %d: no NVIDIA GPU", try), CreatedAt: t0.Add(at)}
	}
	p := retryPolicy{Retries: 3, After: 5 * time.Minute}
	for _, c := range []struct {
		name    string
		results []runs.JobResult
		policy  retryPolicy
		now     time.Duration
		state   string
		try     int
		due     time.Duration
	}{
		{"no result yet", nil, p, time.Hour, "", 0, 0},
		{"first try failed, backoff running", []runs.JobResult{res(1, runs.JobFailed, 0)}, p, 4 * time.Minute, web.RetryWaiting, 2, 5 * time.Minute},
		{"first try failed, backoff over", []runs.JobResult{res(1, runs.JobFailed, 0)}, p, 5 * time.Minute, retryDue, 2, 5 * time.Minute},
		{"dead letter counts as a failure", []runs.JobResult{res(1, runs.JobDead, 0)}, p, 6 * time.Minute, retryDue, 2, 5 * time.Minute},
		{"second try failed: backoff doubles from its failure", []runs.JobResult{res(1, runs.JobFailed, 0), res(2, runs.JobFailed, 7*time.Minute)},
			p, 16 * time.Minute, web.RetryWaiting, 3, 17 * time.Minute},
		{"third try failed: backoff 20m", []runs.JobResult{res(1, runs.JobFailed, 0), res(2, runs.JobDead, 7*time.Minute),
			res(3, runs.JobFailed, 20*time.Minute)}, p, 40 * time.Minute, retryDue, 4, 40 * time.Minute},
		{"every try failed", []runs.JobResult{res(1, runs.JobFailed, 0), res(2, runs.JobFailed, time.Minute),
			res(3, runs.JobFailed, 2*time.Minute), res(4, runs.JobFailed, 3*time.Minute)}, p, 24 * time.Hour, web.RetryExhausted, 5, 0},
		{"no retries", []runs.JobResult{res(1, runs.JobFailed, 0)}, retryPolicy{}, time.Hour, web.RetryExhausted, 2, 0},
		{"results out of order", []runs.JobResult{res(2, runs.JobFailed, 7*time.Minute), res(1, runs.JobFailed, 0)},
			p, 10 * time.Minute, web.RetryWaiting, 3, 17 * time.Minute},
		{"a try finished", []runs.JobResult{res(1, runs.JobFailed, 0), res(2, runs.JobDone, time.Minute)}, p, time.Hour, "", 0, 0},
		{"another verdict's results are ignored", []runs.JobResult{{JobID: engine.CompleteJobID(v+"x", 1), Status: runs.JobFailed}},
			p, time.Hour, "", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := planRetry(v, c.results, c.policy, t0.Add(c.now))
			if got.State != c.state || got.Try != c.try {
				t.Fatalf("plan %+v: want state %q try %d", got, c.state, c.try)
			}
			if (c.state == web.RetryWaiting || c.state == retryDue) && !got.Due.Equal(t0.Add(c.due)) {
				t.Errorf("due %s, want %s", got.Due.Sub(t0), c.due)
			}
			if c.state != "" && got.Failed != len(c.results) {
				t.Errorf("failed %d, want %d", got.Failed, len(c.results))
			}
		})
	}
}

func TestCompleteJobID(t *testing.T) {
	t.Parallel()
	const v = "0b7c2d4e-1111-4a2b-9c3d-5e6f7a8b9c0d"
	for try := 1; try <= 12; try++ {
		id := engine.CompleteJobID(v, try)
		if gv, gt, ok := engine.CompleteJobTry(id); !ok || gv != v || gt != try {
			t.Errorf("%s: %s %d %v", id, gv, gt, ok)
		}
	}
	if engine.CompleteJobID(v, 1) != "complete-"+v || engine.CompleteJobID(v, 2) != "complete-"+v+"-try2" {
		t.Errorf("ids %s %s", engine.CompleteJobID(v, 1), engine.CompleteJobID(v, 2))
	}
	for _, id := range []string{"sleep-001", "complete-", "complete-" + v + "-try1", "complete-" + v + "-try02"} {
		if gv, gt, ok := engine.CompleteJobTry(id); ok && gt != 1 {
			t.Errorf("%s parsed as %s try %d", id, gv, gt)
		}
	}
}

// TestDispatchRetry runs the daemon's dispatcher (embedded NATS, a store
// holding a cuda-synth campaign whose three verdicts are pending) and an
// in-process worker whose complete handler fails the first try of every
// job and completes the retry, except for one task it always fails. With
// --dispatch-retries 2 --dispatch-retry-after 300ms: two verdicts are
// completed by their second try (one revision each, after the backoff);
// the third fails three times and is left pending, exhausted, with its
// reason, and a log line says how to finish it. A late result of an older
// try makes no revision; a result for a verdict that no longer exists is
// dead-lettered. A restarted dispatcher neither resets nor repeats tries.
func TestDispatchRetry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	camp, err := st.CreateCampaign(ctx, runs.Campaign{Name: "retry", Lane: "cuda-synth",
		Spec: []byte("name: retry\nlane: cuda-synth\nmodels: [{name: m, kind: script, script: answers.jsonl}]\n"), SpecDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	deps := testDeps(t)
	if _, err := deps.Limits(camp); err != nil {
		t.Fatal(err)
	}
	var tasks []runs.Task
	for _, k := range []string{"ok-1", "ok-2", "always-fails"} {
		tasks = append(tasks, runs.Task{Key: k, Files: map[string]string{"program.cu": "int main() { return 0; }\n"}, Meta: map[string]string{}})
	}
	if _, err := st.AddTasks(ctx, camp.ID, tasks); err != nil {
		t.Fatal(err)
	}
	pendingVerdict := map[string]runs.Result{} // by task key
	for {
		l, err := st.Claim(ctx, camp.ID, "w", time.Minute)
		if errors.Is(err, runs.ErrNoTask) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v := runs.Verdict{Pass: true, Stage: "compile", Policy: "test",
			Stages: []byte(`[{"name":"compile","ok":true},{"name":"gpu-run","ok":false,"skipped":true,"detail":"no GPU"}]`)}
		if err := st.Finish(ctx, l, runs.Attempt{Answer: "int main() { return 0; }", Model: "m"}, v); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := st.PendingResults(ctx, camp.ID, engine.CompleteJobPrefix)
	if err != nil || len(rs) != 3 {
		t.Fatalf("pending results %d %v", len(rs), err)
	}
	for _, r := range rs {
		pendingVerdict[r.Task.Key] = r
	}

	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := Config{Port: -1, Interval: 100 * time.Millisecond, Retries: 2, RetryAfter: 300 * time.Millisecond,
		Queue: jobs.QueueConfig{AckWait: 2 * time.Second, MaxDeliver: 2}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d := New(cfg, data, st, deps, log)
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer d.Stop(context.Background())

	// The worker: fails every first try; fails every try of always-fails.
	var (
		mu  sync.Mutex
		ran []string
	)
	nc, err := jobs.Connect(jobs.ConnConfig{URL: d.URL(), Name: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	handler := func(ctx context.Context, j jobs.Job, _ *jobs.Artifacts) (json.RawMessage, error) {
		var cj engine.CompleteJob
		if err := json.Unmarshal(j.Payload, &cj); err != nil {
			return nil, jobs.Permanent(err)
		}
		mu.Lock()
		ran = append(ran, j.ID)
		mu.Unlock()
		if _, try, _ := engine.CompleteJobTry(j.ID); try == 1 || cj.TaskKey == "always-fails" {
			return nil, jobs.Permanent(fmt.Errorf("complete task %s: no NVIDIA GPU (try %d)", cj.TaskKey, try))
		}
		tv := cj.Prev
		for i := range tv.Stages {
			tv.Stages[i].OK, tv.Stages[i].Skipped, tv.Stages[i].Detail = true, false, ""
		}
		tv.Stage = "gpu-run"
		return json.Marshal(engine.CompleteOutput{AttemptID: cj.AttemptID, VerdictID: cj.VerdictID, Verdict: tv,
			Artifacts: map[string]string{}, Toolchain: map[string]string{"gpu": "fake"}, Policy: "fake worker"})
	}
	wk, err := jobs.NewWorker(nc, jobs.WorkerConfig{ID: "fake-gpu", Capabilities: []string{"gpu"},
		Handlers: map[string]jobs.Handler{CompleteJobKind: handler}, Heartbeat: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := wk.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer wk.Stop(context.Background())

	// 2 verdicts: a failed try and a done one; always-fails: 3 failed.
	deadline := time.Now().Add(60 * time.Second)
	var status web.DispatchStatus
	for {
		if status, err = d.DispatchStatus(ctx); err != nil {
			t.Fatal(err)
		}
		if status.Results.Done == 2 && status.Results.Failed == 5 && status.Results.RetriesExhausted == 1 {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			t.Fatalf("status after 60s: %+v\nruns %v\n%s", status.Results, ran, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for key, r := range pendingVerdict {
		jrs, err := st.JobResultsWithPrefix(ctx, engine.CompleteJobPrefix+r.Verdict.ID)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := st.Verdicts(ctx, r.Attempt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if key == "always-fails" {
			if len(jrs) != 3 || len(vs) != 1 {
				t.Errorf("%s: %d job results, %d revisions: want 3 failed tries and the pending verdict alone", key, len(jrs), len(vs))
			}
			continue
		}
		if len(jrs) != 2 || jrs[0].JobID != engine.CompleteJobID(r.Verdict.ID, 1) || jrs[0].Status != runs.JobFailed ||
			jrs[1].JobID != engine.CompleteJobID(r.Verdict.ID, 2) || jrs[1].Status != runs.JobDone {
			t.Fatalf("%s: job results %+v", key, jrs)
		}
		if gap := jrs[1].CreatedAt.Sub(jrs[0].CreatedAt); gap < cfg.RetryAfter {
			t.Errorf("%s: retried %s after the failure, before the backoff (%s)", key, gap, cfg.RetryAfter)
		}
		if len(vs) != 2 || vs[1].ID != jrs[1].VerdictID || !vs[1].Pass || vs[1].Toolchain["completed_by.gpu"] != "fake" {
			t.Errorf("%s: revisions %+v", key, vs)
		}
	}
	if len(status.Retries) != 1 || status.Retries[0].TaskKey != "always-fails" || status.Retries[0].State != web.RetryExhausted ||
		status.Retries[0].Tries != 3 || !strings.Contains(status.Retries[0].LastReason, "no NVIDIA GPU (try 3)") {
		t.Errorf("retries %+v", status.Retries)
	}
	if !strings.Contains(logs.String(), "kiln rescore --pending "+camp.ID) {
		t.Errorf("no log line says how to finish the exhausted verdict by hand:\n%s", logs.String())
	}
	if len(status.Workers) != 1 || status.Workers[0].ID != "fake-gpu" || len(status.Queues) != 1 || status.Queues[0].Capability != "gpu" {
		t.Errorf("workers %+v queues %+v (%s)", status.Workers, status.Queues, status.QueueError)
	}

	// A late result of an older try of a completed verdict: recorded, no
	// revision. A result for a verdict that does not exist: dead-lettered.
	ok := pendingVerdict["ok-1"]
	late := engine.CompleteOutput{AttemptID: ok.Attempt.ID, VerdictID: ok.Verdict.ID, Artifacts: map[string]string{},
		Verdict: tools.Verdict{Pass: true}}
	gone := late
	gone.VerdictID = "no-such-verdict"
	for id, out := range map[string]engine.CompleteOutput{engine.CompleteJobID(ok.Verdict.ID, 3): late, "complete-no-such-verdict": gone} {
		b, _ := json.Marshal(out)
		rb, _ := json.Marshal(jobs.Result{JobID: id, Kind: CompleteJobKind, Capability: "gpu", Worker: "late", OK: true, Deliveries: 1, Payload: b})
		if _, err := d.q.JetStream().Publish(ctx, jobs.ResultsPrefix+CompleteJobKind, rb); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		jr, err := st.JobResultOf(ctx, engine.CompleteJobID(ok.Verdict.ID, 3))
		if err == nil {
			if jr.Status != runs.JobDone || jr.VerdictID != "" || !strings.Contains(jr.Reason, "superseded") {
				t.Errorf("late result stored as %+v", jr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("late result not stored: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if vs, _ := st.Verdicts(ctx, ok.Attempt.ID); len(vs) != 2 {
		t.Errorf("a late result made revision %d", len(vs))
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		dead, err := d.q.JetStream().Stream(ctx, jobs.DeadStream)
		if err != nil {
			t.Fatal(err)
		}
		m, err := dead.GetLastMsgForSubject(ctx, jobs.DeadPrefix+"gpu")
		if err == nil && m.Header.Get(jobs.DeadOfHeader) == "result" && strings.Contains(m.Header.Get(jobs.DeadReasonHeader), "no-such-verdict") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("result for a missing verdict not dead-lettered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := st.JobResultOf(ctx, "complete-no-such-verdict"); !errors.Is(err, runs.ErrNotFound) {
		t.Errorf("result for a missing verdict stored: %v", err)
	}

	// Restart: the tries come from the store; nothing is sent again.
	wk.Stop(context.Background())
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	before := len(ran)
	mu.Unlock()
	d2 := New(cfg, data, st, deps, log)
	if err := d2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer d2.Stop(context.Background())
	time.Sleep(time.Second)
	s2, err := d2.DispatchStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Retries) != 1 || s2.Retries[0].State != web.RetryExhausted || s2.Retries[0].Tries != 3 {
		t.Errorf("after a restart: retries %+v", s2.Retries)
	}
	for _, q := range s2.Queues {
		if q.Waiting+uint64(q.InFlight) != 0 {
			t.Errorf("after a restart: jobs queued again: %+v", q)
		}
	}
	mu.Lock()
	t.Logf("worker ran %v (%d before the restart)", ran, before)
	mu.Unlock()
}

// TestDispatchCapabilities: the lanes that leave stages pending name the
// capability their Completer needs, among those workers offer.
func TestDispatchCapabilities(t *testing.T) {
	t.Parallel()
	reg, err := lanes.Registry()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"c2x86": "", "cuda-synth": kit.CapabilityGPU, "cuda2hip": kit.CapabilityGPU,
		"ptx2cuda": kit.CapabilityGPU, "sass2rdna": kit.CapabilityAMD, "torch2cuda": kit.CapabilityTorch}
	for _, name := range reg.Names() {
		k, _ := reg.Get(name)
		if w, ok := want[name]; ok && k.Capability != w {
			t.Errorf("lane %s: capability %q, want %q", name, k.Capability, w)
		}
		if k.Capability != "" && !jobs.ValidCapability(k.Capability) {
			t.Errorf("lane %s: capability %q is no subject token", name, k.Capability)
		}
	}
	// ptx2cuda's torch program tasks go to torch workers, its others to
	// GPU workers.
	k, _ := reg.Get("ptx2cuda")
	torchItem := tools.Item{Lane: "ptx2cuda", Files: map[string]string{ptx2cuda.FileTorchSpec: "{}"}}
	plain := tools.Item{Lane: "ptx2cuda", Files: map[string]string{ptx2cuda.FileHarness: "{}"}}
	if got := jobCapability(k, torchItem); got != kit.CapabilityTorch {
		t.Errorf("torch program task: capability %q", got)
	}
	if got := jobCapability(k, plain); got != kit.CapabilityGPU {
		t.Errorf("ptx2cuda task: capability %q", got)
	}
}

// testDeps are the dispatcher's dependencies as kiln serve wires them:
// this build's lanes, and the limits of a campaign's stored spec.
func testDeps(t *testing.T) Deps {
	t.Helper()
	reg, err := lanes.Registry()
	if err != nil {
		t.Fatal(err)
	}
	return Deps{
		Lanes: func() (*kit.Registry, error) { return reg, nil },
		Limits: func(camp runs.Campaign) (sandboxes.Limits, error) {
			sp, err := spec.Parse(camp.Spec, camp.Name+".yaml", spec.Options{Lanes: reg.Names(), Dir: camp.SpecDir})
			if err != nil {
				return sandboxes.Limits{}, fmt.Errorf("stored spec of campaign %s: %w", camp.ID, err)
			}
			return sp.Sandbox.Limits(), nil
		},
	}
}

// syncBuffer is a log sink the test reads while the dispatcher writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
