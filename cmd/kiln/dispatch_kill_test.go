package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/tools"
)

// fakeGPULane stands in for a GPU host in worker processes this package's
// tests start (KILN_TEST_FAKE_COMPLETE=<delay>): its Complete waits the
// delay, as a GPU run of fixed length would, and passes the pending
// stages. Everything around it is kiln's: the job, the artifacts through
// the object store, the result, its storage as a verdict revision.
type fakeGPULane struct {
	name  string
	delay time.Duration
}

func (l fakeGPULane) Name() string                       { return l.name }
func (l fakeGPULane) Extract(text string) (string, bool) { return text, true }
func (l fakeGPULane) Tools(tools.Item) []tools.Tool      { return nil }
func (l fakeGPULane) Verify(context.Context, tools.Item, string) (tools.Verdict, error) {
	return tools.Verdict{}, fmt.Errorf("fake GPU lane %s verifies nothing", l.name)
}

// fakeJobMark starts the lines the fake lane writes to stderr as a job
// starts and ends, so that a test can kill a worker in the middle of one.
const fakeJobMark = "kiln-test-fake-gpu job "

func (l fakeGPULane) Complete(ctx context.Context, _ tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	fmt.Fprintln(os.Stderr, fakeJobMark+"start")
	defer fmt.Fprintln(os.Stderr, fakeJobMark+"end")
	t := time.NewTimer(l.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return tools.Verdict{}, ctx.Err()
	}
	v := prev
	v.Stages = append([]tools.Stage(nil), prev.Stages...)
	for i := range v.Stages {
		if v.Stages[i].Skipped {
			v.Stages[i] = tools.Stage{Name: v.Stages[i].Name, OK: true, Duration: l.delay,
				Detail: fmt.Sprintf("test worker %d: the GPU stage is faked", os.Getpid())}
			v.Stage = v.Stages[i].Name
		}
	}
	v.Pass, v.Class, v.Diagnostic = true, "", ""
	v.Artifacts = nil
	return v, nil
}

func init() {
	if d, err := time.ParseDuration(os.Getenv("KILN_TEST_FAKE_COMPLETE")); err == nil {
		testCompleteLane = func(lane string) tools.Lane { return fakeGPULane{name: lane, delay: d} }
	}
}

// TestDispatchKillWorkers is issue 12's first check with kiln's own
// processes: `kiln serve --dispatch` runs a cuda-synth campaign on this
// CPU host (its GPU run stage pending), and three `kiln worker` processes
// complete the pending verdicts with jobs of a fixed time (2 s: the
// stand-in GPU above). Workers are SIGKILLed at random moments and
// restarted; a killed worker's job goes to another after the ack wait. At
// the end every pending verdict has exactly one completion: one job result
// and one new verdict revision, that passes; none is lost.
func TestDispatchKillWorkers(t *testing.T) {
	longOnly(t, "worker processes SIGKILLed while completing a dispatched campaign (TestDispatchPendingToWorker dispatches one, TestDispatchRetry completes one, in the default tier)")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Four programs, three samples each: twelve verdicts, most pending.
	dc := startDispatchCampaign(ctx, t, "kill-workers", "{corpus: builtin, limit: 4, samples_per_task: 3}",
		"--dispatch-ack-wait", "2s", "--dispatch-retries", "0")
	defer dc.srv.stop(t, 60*time.Second)
	srv, st, dir, natsURL, seedFile := dc.srv, dc.st, dc.dir, dc.natsURL, dc.seedFile
	pending := dc.pending()
	if len(pending) < 8 {
		t.Fatalf("%d pending verdicts of %d results: too few to test with", len(pending), len(dc.results))
	}

	// Three workers with the 2 s stand-in GPU; kill and restart them at
	// random moments while jobs remain.
	type proc struct {
		cmd  *exec.Cmd
		done chan struct{}
		out  syncBuffer
	}
	var mu sync.Mutex
	procs := make([]*proc, 3)
	start := func(i int) {
		p := &proc{done: make(chan struct{})}
		p.cmd = exec.Command(os.Args[0], "worker", "--nats", natsURL, "--nkey", seedFile, "--capabilities", "gpu",
			"--id", "w"+strconv.Itoa(i), "--data", filepath.Join(dir, "worker-data-"+strconv.Itoa(i)), "--log-level", "warn")
		p.cmd.Env = append(os.Environ(), "KILN_TEST_MAIN=1", "KILN_TEST_FAKE_COMPLETE=2s")
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		p.cmd.WaitDelay = 5 * time.Second
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = p.cmd.Wait(); close(p.done) }()
		mu.Lock()
		procs[i] = p
		mu.Unlock()
	}
	kill := func(i int) {
		mu.Lock()
		p := procs[i]
		mu.Unlock()
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
	for i := range procs {
		start(i)
	}
	defer func() {
		for i := range procs {
			kill(i)
		}
	}()

	completed := func() int {
		jrs, err := st.JobResults(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(jrs)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills := 0
	deadline := time.Now().Add(4 * time.Minute)
	for completed() < len(pending) {
		if time.Now().After(deadline) {
			t.Fatalf("after 4m: %d job results for %d pending verdicts (%d kills)\nserve: %s", completed(), len(pending), kills, srv.stderr.String())
		}
		time.Sleep(time.Duration(700+rng.IntN(1300)) * time.Millisecond)
		if kills < 4 && completed() < len(pending)-2 {
			// A worker in the middle of a job (a random pick could land on
			// one just restarted and idle, and no kill would test anything).
			var busy []int
			mu.Lock()
			for i, p := range procs {
				out := p.out.String()
				if strings.Count(out, fakeJobMark+"start") > strings.Count(out, fakeJobMark+"end") {
					busy = append(busy, i)
				}
			}
			mu.Unlock()
			if len(busy) == 0 {
				continue
			}
			i := busy[rng.IntN(len(busy))]
			kill(i)
			kills++
			start(i)
		}
	}
	if kills < 2 {
		t.Fatalf("only %d kills happened before the jobs were done", kills)
	}
	time.Sleep(3 * time.Second) // late duplicates, if any, would land now

	jrs, err := st.JobResults(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	redelivered := 0
	for _, jr := range jrs {
		redelivered += max(jr.Deliveries-1, 0)
		vid, _, ok := engine.CompleteJobTry(jr.JobID)
		if !ok {
			t.Errorf("job result %s is not a complete job", jr.JobID)
			continue
		}
		if _, ok := pending[vid]; !ok {
			t.Errorf("job result %s for a verdict that was not pending", jr.JobID)
		}
		if jr.Status != runs.JobDone {
			t.Errorf("job %s: %s (%s)", jr.JobID, jr.Status, jr.Reason)
		}
		seen[vid]++
	}
	for vid, r := range pending {
		if seen[vid] != 1 {
			t.Errorf("verdict %s (task %s): %d job results, want 1", vid, r.Task.Key, seen[vid])
		}
		vs, err := st.Verdicts(ctx, r.Attempt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 {
			t.Errorf("task %s: %d verdict revisions, want the pending one and its completion", r.Task.Key, len(vs))
			continue
		}
		last := vs[len(vs)-1]
		if !last.Pass || len(pendingOf(last)) > 0 {
			t.Errorf("task %s: completion pass=%v, pending %v", r.Task.Key, last.Pass, pendingOf(last))
		}
	}
	// Every kill lands on a worker in the middle of a job (kills only
	// while more than two jobs remain): that job is delivered again.
	if redelivered == 0 {
		t.Errorf("%d kills, but no job was delivered twice: no kill hit a running job", kills)
	}
	t.Logf("%d pending verdicts completed exactly once by 3 worker processes; %d SIGKILLs with restarts, %d redeliveries", len(pending), kills, redelivered)
}
