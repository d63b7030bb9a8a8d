package torch2cuda

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cpuLane is a lane judging on the CPU in the real sandbox, for the
// server tests.
func cpuLane(t *testing.T) *Lane {
	t.Helper()
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Device: "cpu", Timeout: 3 * time.Minute,
		RunTimeout: 30 * time.Second, Trials: 2, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fixture reads one of the judge's test fixtures (judge/testdata).
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("judge", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A slot's batches go to one long-lived judge process (serve.go): the
// second batch is judged by the same process, a process that has ended is
// replaced, one that dies with work outstanding is a fault, and Close ends
// the idle ones. Real sandbox, real judge.py on the CPU; the candidate
// needs no build.
func TestJudgeServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts judge.py with torch")
	}
	needSandbox(t)
	t.Parallel()
	l := cpuLane(t)
	read := func(name string) string { return fixture(t, name) }
	ref, cand := read("ref_relu_matmul.py"), read("cand_no_ext.py")
	batch := func(n int) []*judgeJob {
		var jobs []*judgeJob
		for i := 0; i < n; i++ {
			jobs = append(jobs, &judgeJob{ctx: context.Background(), ref: ref, cand: cand, key: "nobuild"})
		}
		return jobs
	}
	check := func(what string, outs []judgeOut) {
		t.Helper()
		for i, o := range outs {
			if o.err != nil || o.fault != "" || len(o.raw) == 0 {
				t.Fatalf("%s: outcome %d: err %v fault %q", what, i, o.err, o.fault)
			}
			if o.res.Class != string(ClassSuspectedCheating) {
				t.Errorf("%s: outcome %d: a candidate with no extension got class %q, want %q", what, i, o.res.Class, ClassSuspectedCheating)
			}
		}
	}
	idle := func() []*judgeServer {
		l.servers.mu.Lock()
		defer l.servers.mu.Unlock()
		return append([]*judgeServer(nil), l.servers.idle[0]...)
	}
	check("first batch", l.runServed(batch(2), 0))
	first := idle()
	if len(first) != 1 || !first[0].alive() || first[0].seq != 2 {
		t.Fatalf("after the first batch: idle servers %d, want one alive that took 2 jobs", len(first))
	}
	start := time.Now()
	check("second batch", l.runServed(batch(1), 0))
	if s := idle(); len(s) != 1 || s[0] != first[0] || s[0].seq != 3 {
		t.Fatalf("the second batch did not go to the same process")
	}
	served := time.Since(start)
	// the same batch with a process of its own, as before (Config.OneShotJudge)
	start = time.Now()
	check("one-shot batch", l.runOneShot(batch(1), 0))
	t.Logf("a batch of one: %s on a running judge process, %s with a process of its own",
		served.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	// Its files are gone from the box once the batch is done.
	if tree, err := first[0].box.ReadTree(".", 1<<20, 100); err != nil {
		t.Fatal(err)
	} else {
		for name := range tree {
			if strings.HasPrefix(name, "jobs/") || strings.HasPrefix(name, "outbox/") || strings.HasPrefix(name, "inbox/") {
				t.Errorf("left in the box after its batch: %s", name)
			}
		}
	}

	// A process that has ended (here: killed between batches) is replaced.
	first[0].cancel()
	<-first[0].ended
	check("after the process ended", l.runServed(batch(1), 0))
	if s := idle(); len(s) != 1 || s[0] == first[0] || !s[0].alive() {
		t.Fatalf("the ended process was not replaced")
	}

	// One that ends with work outstanding: the batch's outcomes are faults.
	s, err := l.takeServer(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.cancel()
	<-s.ended
	outs := make([]judgeOut, 2)
	if l.serveBatch(s, batch(2), time.Minute, outs) {
		t.Errorf("a dead process was reported fit")
	}
	for i, o := range outs {
		if o.err == nil || !strings.Contains(o.fault, "the judge gave no result (killed") {
			t.Errorf("outcome %d of a dead process: err %v fault %q", i, o.err, o.fault)
		}
	}
	s.kill()

	// One that gives no result within the batch's bound is killed: a fault.
	if s, err = l.takeServer(0, 0); err != nil {
		t.Fatal(err)
	}
	hang := []*judgeJob{{ctx: context.Background(), ref: ref, cand: read("cand_hang.py"), key: "hang"}}
	outs = make([]judgeOut, 1)
	start = time.Now()
	if l.serveBatch(s, hang, 3*time.Second, outs) {
		t.Errorf("a process past its bound was reported fit")
	}
	if outs[0].err == nil || !strings.Contains(outs[0].fault, "the judge gave no result within 3s") || s.alive() {
		t.Errorf("past the bound: err %v fault %q alive %v", outs[0].err, outs[0].fault, s.alive())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the bound of 3 s took %s to act", d)
	}
	s.kill()

	// Close stops the idle processes; a server given back after it is stopped.
	kept := idle()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range kept {
		if s.alive() {
			t.Errorf("an idle judge process outlived Close")
		}
	}
	if s := idle(); len(s) != 0 {
		t.Errorf("%d idle servers after Close", len(s))
	}
}
