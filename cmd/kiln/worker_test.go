package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/dispatch"
	"github.com/kiln-dev/kiln/runs/jobs"
)

// workerDaemon is the daemon's side of the queue as kiln serve runs it:
// embedded NATS with nkey auth, the queue, a collector storing results in
// a real store.
type workerDaemon struct {
	srv   *jobs.Server
	q     *jobs.Queue
	st    *runs.Store
	seed  string
	dupes atomic.Int64
}

func startWorkerDaemon(t *testing.T, qc jobs.QueueConfig) *workerDaemon {
	t.Helper()
	dir := t.TempDir()
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	d := &workerDaemon{seed: filepath.Join(dir, "worker.nk")}
	if err := os.WriteFile(d.seed, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if d.srv, err = jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(dir, "nats"), WorkerNKeys: []string{pub}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.srv.Stop)
	nc, err := jobs.Connect(jobs.ConnConfig{URL: d.srv.URL(), Name: "daemon", Options: d.srv.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	if d.q, err = jobs.NewQueue(ctx, nc, qc); err != nil {
		t.Fatal(err)
	}
	if d.st, err = runs.Open(ctx, filepath.Join(dir, "data"), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.st.Close() })
	col := jobs.NewCollector(d.q, nc, func(ctx context.Context, r jobs.Result) error {
		ok, err := d.st.RecordJob(ctx, dispatch.ResultRecord(r))
		if err == nil && !ok {
			d.dupes.Add(1)
		}
		return err
	}, nil)
	if err := col.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = col.Stop(context.Background()) })
	return d
}

// workerProc runs `kiln worker` (this test binary as kiln) and restarts it
// on demand.
type workerProc struct {
	t    *testing.T
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	out  syncBuffer
	from int // where the running process's output starts in out
	done chan struct{}
}

func (d *workerDaemon) worker(t *testing.T, id string) *workerProc {
	p := &workerProc{t: t, args: []string{"worker", "--nats", d.srv.URL(), "--nkey", d.seed, "--capabilities", "test",
		"--id", id, "--test-kinds", "--data", t.TempDir(), "--log-level", "warn"}}
	p.start()
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *workerProc) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(os.Args[0], p.args...)
	cmd.Env = append(os.Environ(), "KILN_TEST_MAIN=1")
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	p.from = len(p.out.String())
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
}

// busy reports whether the running process is in the middle of a sleep
// job (it wrote a start mark and not yet its end).
func (p *workerProc) busy() bool {
	p.mu.Lock()
	from := p.from
	p.mu.Unlock()
	out := p.out.String()
	if from > len(out) {
		return false
	}
	out = out[from:]
	return strings.Count(out, dispatch.SleepJobMark+"start") > strings.Count(out, dispatch.SleepJobMark+"end")
}

func (p *workerProc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

func (p *workerProc) exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (d *workerDaemon) waitJobs(t *testing.T, n int, within time.Duration) []runs.JobResult {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		rs, err := d.st.JobResults(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) >= n || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWorkerKillRestart: the daemon side and 3 kiln worker processes on
// loopback; sleep jobs of fixed duration; workers SIGKILLed at random
// moments and restarted. Every job ends with exactly one stored result,
// none lost.
func TestWorkerKillRestart(t *testing.T) {
	longOnly(t, "8 s of SIGKILLs of worker processes (TestWorkerPoisonJob and TestDispatchPendingToWorker run workers in the default tier; runs/jobs redelivers a dead worker's job)")
	t.Parallel()
	d := startWorkerDaemon(t, jobs.QueueConfig{AckWait: time.Second, MaxDeliver: 50})
	ctx := context.Background()
	const n, ms = 60, 400
	for i := range n {
		b, _ := json.Marshal(dispatch.SleepPayload{MS: ms})
		if _, err := d.q.Publish(ctx, jobs.Job{ID: fmt.Sprintf("sleep-%03d", i), Kind: dispatch.SleepJobKind, Capability: "test", Payload: b}); err != nil {
			t.Fatal(err)
		}
	}
	ws := []*workerProc{d.worker(t, "w0"), d.worker(t, "w1"), d.worker(t, "w2")}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 12))
	kills := 0
	stopKilling := time.Now().Add(8 * time.Second)
	for time.Now().Before(stopKilling) {
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		// A worker in the middle of a job: a random pick could land on one
		// just restarted and idle (on a loaded host, every pick did), and
		// the kill would test nothing.
		var busy []*workerProc
		for _, w := range ws {
			if w.busy() {
				busy = append(busy, w)
			}
		}
		if len(busy) == 0 {
			continue
		}
		w := busy[rng.IntN(len(busy))]
		w.kill()
		kills++
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		w.start()
	}
	rs := d.waitJobs(t, n, 90*time.Second)
	time.Sleep(2 * time.Second) // let late duplicates arrive: none may be stored
	rs, err := d.st.JobResults(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != n {
		t.Fatalf("%d stored results for %d jobs (kills %d)", len(rs), n, kills)
	}
	redelivered := checkSleepResults(t, rs, n)
	t.Logf("%d jobs, %d SIGKILLs, %d jobs redelivered, %d duplicate results dropped by the store", n, kills, redelivered, d.dupes.Load())
	if kills == 0 || redelivered == 0 {
		t.Errorf("the test killed nothing mid-job (kills %d, redelivered %d)", kills, redelivered)
	}
}

// TestWorkerPoisonJob: a job that makes its worker exit every time ends on
// the dead-letter subject after MaxDeliver deliveries and is recorded as
// dead with its reason; the other jobs are done.
func TestWorkerPoisonJob(t *testing.T) {
	t.Parallel()
	d := startWorkerDaemon(t, jobs.QueueConfig{AckWait: time.Second, MaxDeliver: 3})
	ctx := context.Background()
	for _, j := range []jobs.Job{
		{ID: "poison", Kind: dispatch.ExitJobKind, Capability: "test"},
		{ID: "ok-1", Kind: dispatch.SleepJobKind, Capability: "test", Payload: json.RawMessage(`{"ms":10}`)},
		{ID: "ok-2", Kind: dispatch.SleepJobKind, Capability: "test", Payload: json.RawMessage(`{"ms":10}`)},
	} {
		if _, err := d.q.Publish(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	w := d.worker(t, "w0")
	restarts := 0
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if rs, _ := d.st.JobResults(ctx, ""); len(rs) == 3 {
			break
		}
		if w.exited() { // a supervisor restarts it
			restarts++
			w.start()
		}
		time.Sleep(50 * time.Millisecond)
	}
	r, err := d.st.JobResultOf(ctx, "poison")
	if err != nil {
		t.Fatalf("poison job: %v (restarts %d)\n%s", err, restarts, w.out.String())
	}
	if r.Status != runs.JobDead || r.Deliveries != 3 || r.Reason == "" {
		t.Errorf("poison job result %+v", r)
	}
	for _, id := range []string{"ok-1", "ok-2"} {
		if r, err := d.st.JobResultOf(ctx, id); err != nil || r.Status != runs.JobDone {
			t.Errorf("%s: %+v %v", id, r, err)
		}
	}
	if restarts < 3 {
		t.Errorf("worker exited %d times, want 3 (one per delivery)", restarts)
	}
	dead, err := d.q.JetStream().Stream(ctx, jobs.DeadStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dead.GetLastMsgForSubject(ctx, jobs.DeadPrefix+"test")
	if err != nil || !bytes.Contains(m.Data, []byte(`"poison"`)) {
		t.Errorf("dead letter subject: %v", err)
	}
	t.Logf("poison: %s after %d deliveries; worker restarted %d times", r.Reason, r.Deliveries, restarts)
}

// checkSleepResults checks the stored results of n sleep jobs (sleep-000,
// ...): each done, stored once, none lost. It returns how many were
// delivered more than once.
func checkSleepResults(t *testing.T, rs []runs.JobResult, n int) (redelivered int) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.JobID] {
			t.Errorf("job %s stored twice", r.JobID)
		}
		seen[r.JobID] = true
		if r.Status != runs.JobDone {
			t.Errorf("job %s: %s %s", r.JobID, r.Status, r.Reason)
		}
		if r.Deliveries > 1 {
			redelivered++
		}
	}
	for i := range n {
		if !seen[fmt.Sprintf("sleep-%03d", i)] {
			t.Errorf("job sleep-%03d lost", i)
		}
	}
	return redelivered
}
