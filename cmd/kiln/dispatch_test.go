package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/tools"
)

// TestDispatchPendingToWorker runs `kiln serve --dispatch` (embedded NATS,
// worker nkeys) and a `kiln worker --capabilities gpu` process on this CPU
// host. A cuda-synth campaign submitted over the API leaves its GPU run
// stage pending; the daemon publishes each pending verdict as a complete
// job of capability gpu; the worker, which has no GPU, tries, fails on
// every delivery and, at the last, reports the failure. The test checks
// that each pending verdict has exactly one job result, failed with the
// worker's reason (no NVIDIA GPU), that the verdicts stay pending (a host
// that could not run the stage judged nothing) with no extra revision, that
// later scans publish nothing again, and that GET /v1/workers lists the
// worker. (A completion that passes needs a GPU host: see
// runs/jobs/QUEUE_BENCH.md.)
func TestDispatchPendingToWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles CUDA programs and waits out redeliveries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Two pending verdicts (two jobs to tell apart) of one program: two
	// samples of one corpus task, so that the daemon builds one program
	// (the same answer twice hits its compile cache); -tags long: two
	// programs.
	dc := startDispatchCampaign(ctx, t, "gpu-pending", tierPick("{corpus: builtin, limit: 1, samples_per_task: 2}", "{corpus: builtin, limit: 2}"))
	srv, stderr, cl, natsURL, seedFile, dir, st := dc.srv, dc.srv.stderr, dc.srv.cl, dc.natsURL, dc.seedFile, dc.dir, dc.st
	info := struct{ ID string }{dc.campaign}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			srv.stop(t, 60*time.Second)
		}
	}
	defer stop()

	// The worker: this test binary as kiln, with the nkey the daemon lists.
	var wout syncBuffer
	wk := exec.Command(os.Args[0], "worker", "--nats", natsURL, "--nkey", seedFile, "--capabilities", "gpu",
		"--id", "cpu-host-claims-gpu", "--data", filepath.Join(dir, "worker-data"), "--log-level", "warn")
	wk.Env = append(os.Environ(), "KILN_TEST_MAIN=1")
	wk.Stdout, wk.Stderr = &wout, &wout
	wk.WaitDelay = 5 * time.Second // sandboxed children must not hold its output open
	if err := wk.Start(); err != nil {
		t.Fatal(err)
	}
	wdone := make(chan struct{})
	var werr error
	go func() { werr = wk.Wait(); close(wdone) }()
	defer func() {
		select {
		case <-wdone:
		default:
			_ = wk.Process.Signal(syscall.SIGKILL)
			<-wdone
		}
	}()

	pending := map[string]runs.Result{} // by job id
	for vid, r := range dc.pending() {
		pending[engine.CompleteJobPrefix+vid] = r
	}
	if len(pending) < 2 {
		t.Fatalf("%d pending verdicts among %d results, want at least 2 to dispatch", len(pending), len(dc.results))
	}

	sawWorker := false
	deadline := time.Now().Add(2 * time.Minute)
	var jrs []runs.JobResult
	var err error
	for {
		if !sawWorker {
			if ws, err := cl.Workers(ctx); err == nil {
				for _, raw := range ws {
					var w jobs.WorkerInfo
					if json.Unmarshal(raw, &w) == nil && w.ID == "cpu-host-claims-gpu" && strings.Join(w.Capabilities, ",") == "gpu" {
						// It advertises its host: nvcc, no GPU, the lanes
						// of capability gpu whose toolchains it has.
						if w.Toolchains["nvcc"] == "" || len(w.GPUs) != 0 || !slices.Contains(w.Lanes, "cuda-synth") ||
							slices.Contains(w.Lanes, "torch2cuda") {
							t.Fatalf("worker advertises toolchains %v, GPUs %v, lanes %v", w.Toolchains, w.GPUs, w.Lanes)
						}
						sawWorker = true
					}
				}
			}
		}
		if jrs, err = st.JobResults(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if len(jrs) >= len(pending) && sawWorker {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2m: %d job results for %d pending verdicts, worker listed %v\nserve: %s\nworker: %s",
				len(jrs), len(pending), sawWorker, stderr.String(), wout.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Let more scans run: nothing may be published or stored again.
	time.Sleep(2 * time.Second)
	if jrs, err = st.JobResults(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if len(jrs) != len(pending) {
		t.Errorf("%d job results for %d pending verdicts", len(jrs), len(pending))
	}
	for _, jr := range jrs {
		r, ok := pending[jr.JobID]
		if !ok {
			t.Errorf("job result %s is for no pending verdict", jr.JobID)
			continue
		}
		if jr.Status != runs.JobFailed || jr.Worker != "cpu-host-claims-gpu" || jr.Deliveries != 5 ||
			!strings.Contains(jr.Reason, "no NVIDIA GPU") || jr.VerdictID != "" {
			t.Errorf("job %s: %+v", jr.JobID, jr)
		}
		vs, err := st.Verdicts(ctx, r.Attempt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || vs[0].Pass != r.Verdict.Pass || vs[0].ID != r.Verdict.ID {
			t.Errorf("task %s: %d verdict revisions after a failed completion, want the pending one alone", r.Task.Key, len(vs))
		}
		t.Logf("%s (%s): %s after %d deliveries: %.160s", r.Task.Key, jr.JobID, jr.Status, jr.Deliveries, jr.Reason)
	}
	if pr, err := st.PendingResults(ctx, info.ID, engine.CompleteJobPrefix); err != nil || len(pr) != 0 {
		t.Errorf("pending results still to send: %d %v", len(pr), err)
	}

	// The worker drains on SIGTERM; the daemon stops after it.
	_ = wk.Process.Signal(syscall.SIGTERM)
	select {
	case <-wdone:
		if werr != nil {
			t.Errorf("worker: %v\n%s", werr, wout.String())
		}
	case <-time.After(30 * time.Second):
		t.Error("worker did not drain")
	}
	stop()
}

// dispatchCampaign is the set-up of the dispatch tests: kiln serve
// --dispatch (embedded NATS, one worker nkey) and a cuda-synth campaign it
// ran on this CPU host, answered with the corpus's reference programs, whose
// GPU run stages are pending.
type dispatchCampaign struct {
	dir, natsURL, seedFile string
	srv                    *servedKiln
	campaign               string // id
	st                     *runs.Store
	results                []runs.Result
}

// startDispatchCampaign skips the test where cuda-synth cannot reach its
// pending stage (-short, no nvcc or hipcc); the caller stops srv.
func startDispatchCampaign(ctx context.Context, t *testing.T, name, tasks string, serveArgs ...string) *dispatchCampaign {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: compiles CUDA programs and runs worker processes")
	}
	for _, tool := range []string{"nvcc", "hipcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: cuda-synth verdicts cannot reach the pending GPU stage here", tool)
		}
	}
	dc := &dispatchCampaign{dir: t.TempDir()}
	answers, err := os.ReadFile("../../tools/cudasynth/corpus/answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dc.dir, "answers.jsonl"), answers, 0o644); err != nil {
		t.Fatal(err)
	}
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	dc.seedFile = filepath.Join(dc.dir, "worker.nk")
	keysFile := filepath.Join(dc.dir, "workers.pub")
	if err := os.WriteFile(dc.seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keysFile, []byte("# the GPU worker\n"+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dc.dir, "data")
	warmProbe(ctx, t, data)
	args := append([]string{"--data", data, "--spec-root", dc.dir, "--log-level", "warn",
		"--dispatch", "--nats-port", "-1", "--worker-nkeys", keysFile, "--dispatch-interval", "300ms"}, serveArgs...)
	dc.srv = serveKiln(ctx, t, nil, args...)
	urlRe := regexp.MustCompile(`job queue on (nats://\S+)`)
	for deadline := time.Now().Add(60 * time.Second); dc.natsURL == ""; {
		if m := urlRe.FindStringSubmatch(dc.srv.stderr.String()); m != nil {
			dc.natsURL = m[1]
			break
		}
		if time.Now().After(deadline) {
			dc.srv.stop(t, 60*time.Second)
			t.Fatalf("serve did not start its queue: %s", dc.srv.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	info, err := dc.srv.cl.Submit(ctx, []byte("name: "+name+"\nlane: cuda-synth\ntasks: "+tasks+"\n"+
		"models: [{name: replay, kind: script, script: answers.jsonl}]\nconcurrency: 2\nagent: {repair_turns: 0, max_tool_calls: 0}\n"))
	if err != nil {
		dc.srv.stop(t, 60*time.Second)
		t.Fatalf("submit: %v", err)
	}
	dc.campaign = info.ID
	ch, err := dc.srv.cl.Watch(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var last api.Progress
	for p := range ch {
		last = p
	}
	if last.State != "done" {
		t.Fatalf("campaign: %+v\n%s", last, dc.srv.stderr.String())
	}
	// Read the store beside the daemon (WAL: readers are fine).
	if dc.st, err = runs.Open(ctx, data, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.st.Close() })
	if dc.results, err = dc.st.Results(ctx, info.ID, -1); err != nil {
		t.Fatal(err)
	}
	return dc
}

// pending are the campaign's results whose verdict has pending stages, by
// verdict id.
func (dc *dispatchCampaign) pending() map[string]runs.Result {
	out := map[string]runs.Result{}
	for _, r := range dc.results {
		if len(pendingOf(r.Verdict)) > 0 {
			out[r.Verdict.ID] = r
		}
	}
	return out
}

// pendingOf lists a stored verdict's pending stages.
func pendingOf(v runs.Verdict) []string {
	var stages []tools.Stage
	_ = json.Unmarshal(v.Stages, &stages)
	return tools.PendingStages(tools.Verdict{Stages: stages})
}
