package torch2cuda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGPUs stands in for the judge and the probe at the batcher's
// boundary: a bad GPU fails its batches as a dead judge process does, and
// its probe; a poison candidate makes bad the GPU that judges it.
type fakeGPUs struct {
	mu      sync.Mutex
	bad     map[int]bool
	hold    map[int]chan struct{} // a batch on this GPU waits for the channel to close
	started chan string           // candidates as a batch starts with them (buffered)
	batches map[int][][]string    // candidates of each batch, by GPU
	probes  map[int]int
	poison  string
}

func newFakeGPUs() *fakeGPUs {
	return &fakeGPUs{bad: map[int]bool{}, hold: map[int]chan struct{}{}, started: make(chan string, 100),
		batches: map[int][][]string{}, probes: map[int]int{}}
}

func (f *fakeGPUs) run(jobs []*judgeJob, gpu int) []judgeOut {
	var names []string
	for _, j := range jobs {
		names = append(names, j.cand)
	}
	f.mu.Lock()
	f.batches[gpu] = append(f.batches[gpu], names)
	hold := f.hold[gpu]
	f.mu.Unlock()
	for _, n := range names {
		f.started <- n
	}
	if hold != nil {
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(names, f.poison) {
		f.bad[gpu] = true
	}
	outs := make([]judgeOut, len(jobs))
	for i := range jobs {
		if f.bad[gpu] {
			outs[i] = judgeOut{err: errors.New("torch2cuda judge gave no result for this candidate (killed: wall)"),
				fault: "the judge gave no result (killed: wall)"}
			continue
		}
		outs[i] = judgeOut{res: judgeResult{Pass: true}, raw: []byte(strconv.Itoa(gpu))}
	}
	return outs
}

func (f *fakeGPUs) probe(_ context.Context, gpu int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probes[gpu]++
	if f.bad[gpu] {
		return errors.New("Fake H100 unhealthy: matmul max err nan")
	}
	return nil
}

func (f *fakeGPUs) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fakeGPUs) get(fn func()) { f.set(fn) }

func newTestBatcher(t *testing.T, f *fakeGPUs, slots, gpus int, reprobe time.Duration) *batcher {
	t.Helper()
	b := &batcher{runBatch: f.run, probe: f.probe}
	b.initGPU(Config{GPUSlots: slots, GPUs: gpus, MaxBatch: 4, ProbeTimeout: time.Second, ReprobeInterval: reprobe,
		Logger: slog.New(slog.DiscardHandler)})
	b.window = time.Millisecond
	t.Cleanup(func() { waitIdle(t, b, slots) })
	return b
}

// waitIdle waits until every runner and probe of b has ended: every slot
// is free again.
func waitIdle(t *testing.T, b *batcher, slots int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		n := len(b.free)
		b.mu.Unlock()
		if n == slots {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("batcher not idle: %d of %d slots free", n, slots)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func submitJob(b *batcher, cand string) *judgeJob {
	j := &judgeJob{ctx: context.Background(), cand: cand, done: make(chan judgeOut, 1)}
	b.submit(j)
	return j
}

func waitOut(t *testing.T, j *judgeJob) judgeOut {
	t.Helper()
	select {
	case out := <-j.done:
		return out
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no outcome after 10 s", j.cand)
		return judgeOut{}
	}
}

// judgedOn is the GPU a fake verdict came from, -1 for an error.
func judgedOn(t *testing.T, j *judgeJob) int {
	t.Helper()
	out := waitOut(t, j)
	if out.err != nil {
		t.Errorf("%s: %v", j.cand, out.err)
		return -1
	}
	g, _ := strconv.Atoi(string(out.raw))
	return g
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (b *batcher) down(gpu int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gpus[gpu].down
}

func (b *batcher) slotFree(slot int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.free, slot)
}

// quarantineGPU1 makes GPU 1 (slot 1) fail a batch of cands while GPU 0
// (slot 0) is busy with job "a": GPU 1 is then quarantined and its slot
// given back; the cands wait in the queue. It returns a's job and the
// cands' jobs; GPU 0 is released.
func quarantineGPU1(t *testing.T, b *batcher, f *fakeGPUs, cands ...string) (*judgeJob, []*judgeJob) {
	t.Helper()
	hold := make(chan struct{})
	f.set(func() { f.bad[1], f.hold[0] = true, hold })
	a := submitJob(b, "a")
	if got := <-f.started; got != "a" {
		t.Fatalf("first batch started with %s", got)
	}
	var jobs []*judgeJob
	for _, c := range cands {
		jobs = append(jobs, submitJob(b, c))
	}
	waitFor(t, "GPU 1 quarantined, its slot free", func() bool { return b.down(1) != "" && b.slotFree(1) })
	f.set(func() { f.hold[0] = nil })
	close(hold)
	return a, jobs
}

// TestGPUQuarantineRequeues: a GPU whose batch dies and whose probe fails
// is quarantined and takes no more work; its batch's evaluations go back
// to the front of the queue and get their verdicts on the healthy GPU.
func TestGPUQuarantineRequeues(t *testing.T) {
	t.Parallel()
	f := newFakeGPUs()
	b := newTestBatcher(t, f, 2, 2, time.Hour)
	hold0, hold1 := make(chan struct{}), make(chan struct{})
	f.set(func() { f.bad[1], f.hold[0], f.hold[1] = true, hold0, hold1 })
	a := submitJob(b, "a")
	<-f.started
	bj, cj := submitJob(b, "b"), submitJob(b, "c")
	<-f.started
	<-f.started
	// d waits while both GPUs are busy; the requeued b and c go before it.
	dj := submitJob(b, "d")
	close(hold1)
	waitFor(t, "GPU 1 quarantined, its slot free", func() bool { return b.down(1) != "" && b.slotFree(1) })
	f.set(func() { f.hold[0] = nil })
	close(hold0)
	for _, j := range []*judgeJob{a, bj, cj, dj} {
		if g := judgedOn(t, j); g != 0 {
			t.Errorf("%s judged on GPU %d, want 0", j.cand, g)
		}
	}
	if down := b.down(1); !strings.Contains(down, "GPU 1 failed its health probe: Fake H100 unhealthy: matmul max err nan") ||
		!strings.Contains(down, "killed: wall") {
		t.Errorf("quarantine reason: %q", down)
	}
	for i := range 6 {
		if g := judgedOn(t, submitJob(b, "more"+strconv.Itoa(i))); g != 0 {
			t.Errorf("judged on GPU %d after GPU 1's quarantine", g)
		}
	}
	f.get(func() {
		if want := [][]string{{"b", "c"}}; !slices.EqualFunc(f.batches[1], want, slices.Equal) {
			t.Errorf("GPU 1's batches %v, want %v", f.batches[1], want)
		}
		if len(f.batches[0]) < 2 || !slices.Equal(f.batches[0][1], []string{"b", "c", "d"}) {
			t.Errorf("GPU 0's batches %v: want the requeued b, c first in its second batch", f.batches[0])
		}
		if f.probes[1] != 1 || f.probes[0] != 0 {
			t.Errorf("probes %v, want GPU 1 once", f.probes)
		}
	})
}

// TestGPURecovers: a quarantined GPU is probed again once the interval has
// passed and work waits; still bad, it stays out; healthy, it takes work
// again.
func TestGPURecovers(t *testing.T) {
	t.Parallel()
	f := newFakeGPUs()
	const reprobe = 300 * time.Millisecond
	b := newTestBatcher(t, f, 2, 2, reprobe)
	a, jobs := quarantineGPU1(t, b, f, "b")
	for _, j := range append(jobs, a) {
		if g := judgedOn(t, j); g != 0 {
			t.Errorf("%s judged on GPU %d", j.cand, g)
		}
	}
	// Due again but still bad: probed, still quarantined. (A slow host
	// may have probed it again already, when the interval passed while
	// work waited.)
	probes := func() (n int) {
		f.get(func() { n = f.probes[1] })
		return n
	}
	before := probes()
	time.Sleep(reprobe + 20*time.Millisecond)
	if g := judgedOn(t, submitJob(b, "c")); g != 0 {
		t.Errorf("c judged on GPU %d", g)
	}
	waitFor(t, "GPU 1 probed again", func() bool { return probes() > before && b.slotFree(1) })
	if down := b.down(1); !strings.Contains(down, "GPU 1 failed its health probe again: Fake H100 unhealthy") {
		t.Errorf("after a failed reprobe: %q", down)
	}
	// Healthy now: the next reprobe returns it to service. GPU 0 is held
	// busy with d, so the next job must go to the recovered GPU 1. (Each
	// job is seen to start before the next is submitted: on a loaded host
	// two queued jobs could otherwise share one batch on the held GPU.)
	f.set(func() { f.bad[1] = false })
	time.Sleep(reprobe + 20*time.Millisecond)
	for len(f.started) > 0 {
		<-f.started
	}
	hold := make(chan struct{})
	f.set(func() { f.hold[0] = hold })
	release := sync.OnceFunc(func() {
		f.set(func() { f.hold[0] = nil })
		close(hold)
	})
	defer release()
	d := submitJob(b, "d")
	select {
	case got := <-f.started:
		if got != "d" {
			t.Fatalf("batch started with %s, want d", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("d never started")
	}
	waitFor(t, "GPU 1 back in service, its slot free", func() bool { return b.down(1) == "" && b.slotFree(1) })
	ranOn1 := func(cand string) (ok bool) {
		f.get(func() {
			ok = slices.ContainsFunc(f.batches[1], func(batch []string) bool { return slices.Contains(batch, cand) })
		})
		return ok
	}
	if !ranOn1("d") {
		// d holds GPU 0.
		if g := judgedOn(t, submitJob(b, "e")); g != 1 {
			t.Errorf("e judged on GPU %d while GPU 0 was busy, want the recovered GPU 1", g)
		}
	}
	release()
	if g := judgedOn(t, d); g != 0 && g != 1 {
		t.Errorf("d: %d", g)
	}
	if !ranOn1("d") && !ranOn1("e") {
		t.Error("the recovered GPU judged nothing")
	}
}

// TestGPUAllQuarantined: with every GPU quarantined, queued evaluations
// fail at once with an error that says so and why, and so do new ones
// until a probe is due; a due probe that passes lets them run.
func TestGPUAllQuarantined(t *testing.T) {
	t.Parallel()
	f := newFakeGPUs()
	const reprobe = 2 * time.Second
	b := newTestBatcher(t, f, 2, 2, reprobe)
	f.set(func() { f.bad[0], f.bad[1] = true, true })
	var jobs []*judgeJob
	for i := range 3 {
		jobs = append(jobs, submitJob(b, "j"+strconv.Itoa(i)))
	}
	check := func(out judgeOut) {
		t.Helper()
		msg := fmt.Sprint(out.err)
		if !errors.Is(out.err, ErrGPUQuarantined) || !strings.Contains(msg, "all 2 GPUs are quarantined") ||
			!strings.Contains(msg, "GPU 0 failed its health probe: Fake H100 unhealthy: matmul max err nan (after: the judge gave no result (killed: wall))") ||
			!strings.Contains(msg, "GPU 1 failed its health probe: Fake H100 unhealthy") || !strings.Contains(msg, "next probe in") {
			t.Errorf("outcome: %v", out.err)
		}
	}
	for _, j := range jobs {
		check(waitOut(t, j))
	}
	var probes int
	f.get(func() { probes = f.probes[0] + f.probes[1] })
	start := time.Now()
	check(waitOut(t, submitJob(b, "late")))
	if d := time.Since(start); d > reprobe/2 {
		t.Errorf("a new evaluation waited %s with every GPU quarantined", d)
	}
	f.get(func() {
		if f.probes[0]+f.probes[1] != probes {
			t.Errorf("probes %v: a GPU was probed before its interval", f.probes)
		}
	})
	// GPU 0 heals; once due, the next evaluation waits for its probe and runs.
	f.set(func() { f.bad[0] = false })
	time.Sleep(reprobe + 20*time.Millisecond)
	if g := judgedOn(t, submitJob(b, "after")); g != 0 {
		t.Errorf("judged on GPU %d after GPU 0 healed", g)
	}
}

// TestGPUPoisonCandidate: a candidate that breaks every GPU it runs on is
// requeued twice, then fails; it takes down three GPUs, not the fourth.
func TestGPUPoisonCandidate(t *testing.T) {
	t.Parallel()
	f := newFakeGPUs()
	f.poison = "poison"
	b := newTestBatcher(t, f, 4, 4, time.Hour)
	out := waitOut(t, submitJob(b, "poison"))
	if !errors.Is(out.err, ErrGPUQuarantined) || !strings.Contains(out.err.Error(), "requeued 2 times") ||
		!strings.Contains(out.err.Error(), "not requeued again") || !strings.Contains(out.err.Error(), "unhealthy") {
		t.Errorf("poison outcome: %v", out.err)
	}
	var healthy []int
	f.get(func() {
		runs := 0
		for g := range 4 {
			runs += len(f.batches[g])
			if !f.bad[g] {
				healthy = append(healthy, g)
			}
		}
		if runs != 1+maxRequeues {
			t.Errorf("the poison candidate ran %d times: %v", runs, f.batches)
		}
	})
	if len(healthy) != 1 {
		t.Fatalf("healthy GPUs %v, want one", healthy)
	}
	if g := judgedOn(t, submitJob(b, "fine")); g != healthy[0] {
		t.Errorf("judged on GPU %d, want the healthy GPU %d", g, healthy[0])
	}
}

// TestGPUProbePasses: a bad batch on a GPU that passes its probe keeps
// today's outcome (the error, or the result, delivered, nothing requeued)
// and the GPU in service; a candidate's own crash is not probed for.
func TestGPUProbePasses(t *testing.T) {
	t.Parallel()
	outs := map[string]judgeOut{
		"died":      {err: errors.New("judge gave no result"), fault: "the judge gave no result (exit 1)"},
		"reference": {res: judgeResult{Class: "runtime_error", RefError: true, Diagnostic: "reference: CUDA error: unknown error"}, raw: []byte("{}")},
		"illegal":   {res: judgeResult{Class: "illegal_memory", Diagnostic: "CUDA error: an illegal memory access was encountered"}, raw: []byte("{}")},
	}
	for _, tc := range []struct {
		cand   string
		probes int
	}{{"died", 1}, {"reference", 1}, {"illegal", 0}} {
		t.Run(tc.cand, func(t *testing.T) {
			t.Parallel()
			f := newFakeGPUs()
			b := newTestBatcher(t, f, 1, 1, time.Hour)
			b.runBatch = func(jobs []*judgeJob, gpu int) []judgeOut {
				f.run(jobs, gpu)
				return []judgeOut{outs[jobs[0].cand]}
			}
			out := waitOut(t, submitJob(b, tc.cand))
			want := outs[tc.cand]
			if (out.err == nil) != (want.err == nil) || out.res.Class != want.res.Class {
				t.Errorf("outcome %+v, want %+v", out, want)
			}
			if down := b.down(0); down != "" {
				t.Errorf("quarantined: %s", down)
			}
			f.get(func() {
				if f.probes[0] != tc.probes || len(f.batches[0]) != 1 {
					t.Errorf("probes %d (want %d), batches %v", f.probes[0], tc.probes, f.batches[0])
				}
			})
		})
	}
}

// TestGPUHungProbe: a probe that never returns fails at ProbeTimeout; the
// GPU is quarantined and nothing waits on it.
func TestGPUHungProbe(t *testing.T) {
	t.Parallel()
	f := newFakeGPUs()
	b := newTestBatcher(t, f, 1, 1, time.Hour)
	b.probeFor = 100 * time.Millisecond
	stuck := make(chan struct{})
	defer close(stuck)
	b.probe = func(context.Context, int) error { <-stuck; return nil } // ignores its context
	f.set(func() { f.bad[0] = true })
	start := time.Now()
	out := waitOut(t, submitJob(b, "x"))
	if !errors.Is(out.err, ErrGPUQuarantined) || !strings.Contains(out.err.Error(), "probe timed out after 100ms") {
		t.Errorf("outcome: %v", out.err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestGPUFault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		out  judgeOut
		want string // in the reason; "" for none
	}{
		{"verdict", judgeOut{res: judgeResult{Pass: true}}, ""},
		{"wrong output", judgeOut{res: judgeResult{Class: "wrong_output", Diagnostic: "trial 0: out: 3/9 elements outside tolerance"}}, ""},
		{"illegal memory", judgeOut{res: judgeResult{Class: "illegal_memory", Diagnostic: "CUDA error: an illegal memory access was encountered"}}, ""},
		{"candidate timeout", judgeOut{res: judgeResult{Class: "timeout", Diagnostic: "timed out after 45 s (stage: correctness)"}}, ""},
		{"no sandbox", judgeOut{err: errors.New("torch2cuda judge: open sandbox")}, ""},
		{"judge died", judgeOut{err: errors.New("x"), fault: "the judge gave no result (killed: wall)"}, "killed: wall"},
		{"reference", judgeOut{res: judgeResult{Class: "timeout", RefError: true, Diagnostic: "timed out after 45 s (stage: reference)"}}, "the reference failed"},
		{"judge error", judgeOut{res: judgeResult{Class: "runtime_error", JudgeError: true, Diagnostic: "judge crashed"}}, "the judge failed"},
		{"reference traceback", judgeOut{res: judgeResult{Class: "runtime_error", RefError: true, Diagnostic: "reference: reference failed:   File \"x.py\", line 638, in set_device\n    torch._C._cuda_setDevice(device)\ntorch.AcceleratorError: CUDA error: invalid device ordinal\nGPU device may be out of range, do you have enough GPUs?\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."}},
			"the reference failed: reference: reference failed:   File \"x.py\", line 638, in set_device ... torch.AcceleratorError: CUDA error: invalid device ordinal"},
		{"ECC", judgeOut{res: judgeResult{Class: "runtime_error", Diagnostic: "correctness failed: CUDA error: uncorrectable ECC error encountered"}}, "uncorrectable ECC"},
		{"busy", judgeOut{res: judgeResult{Class: "runtime_error", Diagnostic: "CUDA error: CUDA-capable device(s) is/are busy or unavailable"}}, "busy or unavailable"},
	} {
		got := gpuFault(tc.out)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestParseProbe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, out string
		want      string // in the error; "" for healthy
	}{
		{"healthy", `{"ok":true,"torch":"2.11.0","cuda":"13.0","devices":[{"index":1,"name":"NVIDIA H100 80GB HBM3","capability":"9.0","memory_mb":81000,"healthy":true,"detail":"matmul max err 1.2e-05, 80000 MiB free, 310 ms"}],"error":null,"judge":"kiln-judge/1"}`, ""},
		{"unhealthy", `{"ok":false,"torch":"2.11.0","cuda":"13.0","devices":[{"index":1,"name":"NVIDIA H100","healthy":false,"detail":"health check timed out after 60 s"}],"error":null}`,
			"NVIDIA H100 unhealthy: health check timed out after 60 s"},
		{"no CUDA", `{"ok":false,"torch":"1.13.0a0","cuda":null,"devices":[],"error":"no CUDA device 1 (CUDA not available)","judge":"kiln-judge/1"}`,
			"no CUDA device 1 (CUDA not available) (torch 1.13.0a0)"},
		{"other GPU", `{"ok":true,"torch":"2.11.0","devices":[{"index":0,"healthy":true}],"error":null}`, "device 1 not listed"},
		{"log lines first", "warning: something\n" + `{"ok":true,"torch":"2.11.0","devices":[{"index":1,"healthy":true}],"error":null}`, ""},
		{"nothing", "Traceback (most recent call last):\n  ...", "probe printed no report"},
	} {
		err := parseProbe([]byte(tc.out), 1)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestProbeInSandbox runs the real probe (judge.py probe in the sandbox,
// as the GPU judge does) on a host without a GPU: GPU 0 is not there, and
// the error says so.
func TestProbeInSandbox(t *testing.T) {
	t.Parallel()
	l := newLane(t, "")
	if l.batches.probe == nil {
		t.Fatal("a GPU lane has no probe")
	}
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: see TestGPUProbe (-tags gpu)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := l.probeGPU(ctx, 0)
	if err == nil || !strings.Contains(err.Error(), "no CUDA device 0") {
		t.Errorf("probe of a missing GPU: %v", err)
	}
	if cpu := newLane(t, "cpu"); cpu.batches.probe != nil {
		t.Error("a CPU lane probes GPUs")
	}
}
