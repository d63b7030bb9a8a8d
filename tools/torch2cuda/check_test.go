package torch2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// fakeChecks stands in for the sandboxed "judge.py check": problems whose
// source contains a "# check: REASON" line fail with that reason ("judge"
// makes a judge error); the others pass with a 2 ms reference.
type fakeChecks struct {
	mu   sync.Mutex
	runs [][]string
}

func (f *fakeChecks) run(_ context.Context, refs []string) ([]ProblemCheck, error) {
	f.mu.Lock()
	f.runs = append(f.runs, refs)
	f.mu.Unlock()
	out := make([]ProblemCheck, len(refs))
	for i, ref := range refs {
		ms, draw, rss := 2.0, 1.0, int64(1<<30)
		out[i] = ProblemCheck{OK: true, RefMS: &ms, DrawMS: &draw, HostRSSPeakBytes: &rss}
		if _, reason, ok := strings.Cut(ref, "# check: "); ok {
			reason, _, _ = strings.Cut(reason, "\n")
			if reason == "judge" {
				out[i] = ProblemCheck{JudgeError: true, Diagnostic: "the check process failed: boom"}
				continue
			}
			out[i] = ProblemCheck{Reason: reason, Diagnostic: "the problem's reference failed (" + reason + "): it did"}
		}
	}
	return out, nil
}

func (f *fakeChecks) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs)
}

// fakeLane is a lane that judges on the CPU with fakes at its boundaries:
// the problem check and the judge batches (no sandbox, no python).
func fakeLane(t *testing.T, f *fakeChecks, g *fakeGPUs) *Lane {
	t.Helper()
	if _, ok := testRegistry.Get(toolchain.Torch); !ok {
		t.Skip("no python3 with torch here: the lane leaves its judge stage pending")
	}
	l := &Lane{cfg: Config{Toolchains: testRegistry, Device: "cpu", CacheDir: t.TempDir(),
		Logger: slog.New(slog.DiscardHandler)}.withDefaults()}
	l.checkRun = f.run
	l.batches = newTestBatcher(t, g, 1, 1, time.Hour)
	l.batches.l = l
	return l
}

const okProblem = "class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n"

// TestCheckCache: problems are checked once, in one judge run for many;
// the second check of a problem comes from the cache and runs nothing; a
// task fault is cached, a judge error is not; CheckTask gives a task-fault
// verdict naming the reason, and no verdict for a sound problem.
func TestCheckCache(t *testing.T) {
	t.Parallel()
	f := &fakeChecks{}
	l := fakeLane(t, f, newFakeGPUs())
	ctx := context.Background()
	slow := okProblem + "# check: timeout\n"
	cs, err := l.CheckProblems(ctx, []string{okProblem, slow, okProblem})
	if err != nil {
		t.Fatal(err)
	}
	if f.count() != 1 || len(f.runs[0]) != 2 || !cs[0].OK || cs[1].OK || cs[1].Reason != "timeout" || !cs[2].OK || cs[0].Cached {
		t.Fatalf("first check: %d runs (%v), results %+v", f.count(), f.runs, cs)
	}
	cs, err = l.CheckProblems(ctx, []string{slow, okProblem})
	if err != nil || f.count() != 1 || !cs[0].Cached || !cs[1].Cached || cs[0].Reason != "timeout" || !cs[1].OK {
		t.Fatalf("second check: %v, %d runs, results %+v", err, f.count(), cs)
	}
	// Another problem (one byte more) is checked anew.
	if _, err := l.CheckProblems(ctx, []string{okProblem + "\n"}); err != nil || f.count() != 2 {
		t.Fatalf("changed problem: %v, %d runs", err, f.count())
	}
	// A judge error is an error, and is not cached.
	broken := okProblem + "# check: judge\n"
	for i := 1; i <= 2; i++ {
		if _, err := l.CheckProblems(ctx, []string{broken}); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("judge error: %v", err)
		}
		if f.count() != 2+i {
			t.Fatalf("judge error %d: %d runs (not cached: want %d)", i, f.count(), 2+i)
		}
	}
	v, err := l.CheckTask(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: slow}})
	if err != nil || !v.TaskFault() || v.Pass || v.Stage != StageCheck || !strings.HasPrefix(v.Diagnostic, "reference_error (timeout): ") ||
		len(v.Artifacts[ArtifactCheck]) == 0 || f.count() != 4 {
		t.Fatalf("CheckTask of a broken problem: %v, %+v, %d runs", err, v, f.count())
	}
	v, err = l.CheckTask(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: okProblem}})
	if err != nil || v.TaskFault() || v.Class != "" {
		t.Fatalf("CheckTask of a sound problem: %v, %+v", err, v)
	}
	// The cache survives the lane: a new lane on the same folder runs nothing.
	f2 := &fakeChecks{}
	l2 := fakeLane(t, f2, newFakeGPUs())
	l2.cfg.CacheDir = l.cfg.CacheDir
	if cs, err := l2.CheckProblems(ctx, []string{slow}); err != nil || f2.count() != 0 || !cs[0].Cached {
		t.Fatalf("new lane: %v, %d runs, %+v", err, f2.count(), cs)
	}
	files, _ := filepath.Glob(filepath.Join(l.cfg.CacheDir, "checks", "*.json"))
	if len(files) != 3 {
		t.Errorf("%d cached checks %v, want 3 (two problems and the changed one)", len(files), files)
	}
}

// TestReferenceErrorIsATaskFault: a judge result whose reference failed
// (nothing of the candidate ran) is probed as a possible GPU fault, and on
// a healthy GPU is delivered as a task fault (tools.ClassReferenceError)
// naming the reason, never as the candidate's timeout or runtime error. A
// problem that fails its check is a task fault before any judging. The
// judge gets time limits derived from the problem's check.
func TestReferenceErrorIsATaskFault(t *testing.T) {
	t.Parallel()
	g := newFakeGPUs()
	l := fakeLane(t, &fakeChecks{}, g)
	var got []evalLimits
	var mu sync.Mutex
	l.batches.runBatch = func(jobs []*judgeJob, gpu int) []judgeOut {
		outs := make([]judgeOut, len(jobs))
		for i, j := range jobs {
			mu.Lock()
			got = append(got, j.lim)
			mu.Unlock()
			res := judgeResult{Class: "reference_error", RefError: true, RefReason: "timeout",
				Diagnostic: "the problem's reference failed (timeout): timed out after 45 s (stage: reference)"}
			raw, _ := json.Marshal(res)
			outs[i] = judgeOut{res: res, raw: raw}
		}
		return outs
	}
	cand := "class ModelNew: pass\n"
	l.storeCached(l.cacheKey(cand, ""), map[string][]byte{"kiln_done.json": []byte("{}")}) // built already
	ctx := context.Background()
	newVerdict := func() *verdict {
		return &verdict{v: tools.Verdict{Artifacts: map[string][]byte{}, Measurements: map[string]float64{}}}
	}
	v, err := l.judgeInto(ctx, newVerdict(), okProblem, cand)
	if err != nil {
		t.Fatal(err)
	}
	if !v.TaskFault() || v.Pass || v.Class != tools.ClassReferenceError || v.Stage != StageJudge ||
		!strings.HasPrefix(v.Diagnostic, "reference_error (timeout): ") {
		t.Errorf("verdict %+v: want a task fault at %s naming the timeout", v, StageJudge)
	}
	g.get(func() {
		if g.probes[0] != 1 {
			t.Errorf("%d probes of GPU 0 after a reference error, want 1", g.probes[0])
		}
	})
	// The fake check measured 2 ms + 1 ms: 200 x 3 ms = 0.6 s, under the 45 s floor.
	if len(got) != 1 || got[0].timeout != 45*time.Second || got[0].refTimeout != 45*time.Second || got[0].rss != 3<<30 {
		t.Errorf("limits %+v: want the 45 s floor and 3 GiB", got)
	}
	v, err = l.judgeInto(ctx, newVerdict(), okProblem+"# check: oom\n", cand)
	if err != nil || !v.TaskFault() || v.Stage != StageCheck || !strings.HasPrefix(v.Diagnostic, "reference_error (oom): ") ||
		!strings.Contains(v.Diagnostic, "host memory 110 GiB") || len(got) != 1 {
		t.Errorf("a problem failing its check: %v, %+v, %d judged (want none)", err, v, len(got))
	}
}

// TestCheckPendingHost: on a host that cannot judge (here: no GPU and a
// torch without CUDA), the check is pending: CheckTask lets the task go on
// without running anything, and CheckProblems says why it cannot check.
func TestCheckPendingHost(t *testing.T) {
	t.Parallel()
	f := &fakeChecks{}
	reg := toolchain.FromReport(toolchain.Report{Tools: []toolchain.Tool{{Name: toolchain.Torch, Path: "/usr/bin/python3",
		Version: "python 3.11.2, torch 1.13.0, cuda none"}}})
	l := &Lane{cfg: Config{Toolchains: reg, CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}.withDefaults()}
	l.checkRun = f.run
	broken := okProblem + "# check: crash\n"
	v, err := l.CheckTask(context.Background(), tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: broken}})
	if err != nil || v.TaskFault() || v.Class != "" || f.count() != 0 {
		t.Fatalf("pending host: %v, %+v, %d runs; want no verdict and nothing run", err, v, f.count())
	}
	if _, err := l.CheckProblems(context.Background(), []string{broken}); err == nil ||
		!strings.Contains(err.Error(), "torch here has no CUDA") {
		t.Fatalf("CheckProblems on a pending host: %v", err)
	}
}

func TestEvalLimits(t *testing.T) {
	t.Parallel()
	l := &Lane{cfg: Config{}.withDefaults()}
	f := func(x float64) *float64 { return &x }
	gib := func(n int64) *int64 { n <<= 30; return &n }
	for _, tc := range []struct {
		name                string
		c                   ProblemCheck
		timeout, refTimeout time.Duration
		rss                 int64
	}{
		{"unmeasured", ProblemCheck{}, 45 * time.Second, 45 * time.Second, 0},
		{"fast", ProblemCheck{RefMS: f(0.1), DrawMS: f(0.5), HostRSSPeakBytes: gib(1), HostRSSBytes: gib(2)}, 45 * time.Second,
			45 * time.Second, 3 << 30},
		{"no peak", ProblemCheck{HostRSSBytes: gib(2)}, 45 * time.Second, 45 * time.Second, 6 << 30},
		{"1 s forward, slow build", ProblemCheck{RefMS: f(900), DrawMS: f(100), InitMS: f(16000)}, 200 * time.Second,
			232 * time.Second, 0},
		{"capped", ProblemCheck{RefMS: f(60000), HostRSSPeakBytes: gib(100)}, 15 * time.Minute, 15 * time.Minute, 110 << 30},
	} {
		lim := l.evalLimits(tc.c)
		if lim.timeout != tc.timeout || lim.refTimeout != tc.refTimeout || lim.rss != tc.rss {
			t.Errorf("%s: %+v, want %s, %s and %d", tc.name, lim, tc.timeout, tc.refTimeout, tc.rss)
		}
	}
}

// TestCheckOnCPU runs the real "judge.py check" in the sandbox on the CPU
// over sound and broken problems: one run for all, each reason right, the
// second check from the cache.
func TestCheckOnCPU(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Device: "cpu", CheckTimeout: 8 * time.Second,
		CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"ref_relu_matmul.py", "problems/ref_raises.py", "problems/ref_nondet.py", "problems/ref_hang.py",
		"problems/ref_invalid.py", "problems/ref_oom.py"}
	want := []string{"", "crash", "nondeterministic", "timeout", "invalid", "oom"}
	refs := make([]string, len(names))
	for i, n := range names {
		b, err := os.ReadFile(filepath.Join("judge", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = string(b)
	}
	ctx := context.Background()
	start := time.Now()
	cs, err := l.CheckProblems(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d problems checked in %s", len(refs), time.Since(start).Round(time.Millisecond))
	for i, c := range cs {
		if c.OK != (want[i] == "") || c.Reason != want[i] || c.Cached {
			t.Errorf("%s: ok %v reason %q cached %v (want reason %q): %.300s", names[i], c.OK, c.Reason, c.Cached, want[i], c.Diagnostic)
		}
	}
	if c := cs[0]; c.RefMS == nil || *c.RefMS <= 0 || c.InputBytes == nil || *c.InputBytes != 32*64*4 || c.OutputBytes == nil ||
		*c.OutputBytes != 32*48*4 || len(c.Outputs) != 1 || c.BitwiseDeterministic == nil || !*c.BitwiseDeterministic ||
		c.PeakBytes != nil || c.TimingDevice != "cpu" || c.InputDraw != "cpu" || c.HostRSSBytes == nil || *c.HostRSSBytes <= 0 {
		b, _ := json.Marshal(c)
		t.Errorf("sound problem's figures: %s", b)
	}
	again, err := l.CheckProblems(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range again {
		if !c.Cached || c.Reason != want[i] {
			t.Errorf("%s again: cached %v reason %q", names[i], c.Cached, c.Reason)
		}
	}
}

// TestCheckQueue: checks asked for at once (a rescore of many new
// problems) run a few to a judge process, at most checkRuns processes at a
// time, each problem once; a judge error in a shared run is its own
// problem's only (the others are checked again alone), and is not cached.
func TestCheckQueue(t *testing.T) {
	f := &fakeChecks{}
	var mu sync.Mutex
	active, most := 0, 0
	l := fakeLane(t, f, newFakeGPUs())
	l.checkRun = func(ctx context.Context, refs []string) ([]ProblemCheck, error) {
		mu.Lock()
		active++
		most = max(most, active)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		active--
		mu.Unlock()
		return f.run(ctx, refs)
	}
	ctx := context.Background()
	ask := func(refs []string) []error {
		errs := make([]error, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := l.checkOne(ctx, ref)
				if err == nil && !c.OK {
					err = fmt.Errorf("check failed: %+v", c)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		return errs
	}
	var refs []string
	for i := range 21 {
		refs = append(refs, fmt.Sprintf("%s# problem %d\n", okProblem, i))
	}
	for i, err := range ask(append(refs, refs[3])) { // problem 3 asked twice at once
		if err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	seen := map[string]int{}
	for _, run := range f.runs {
		if len(run) > checksPerRun {
			t.Errorf("a run of %d checks: want at most %d", len(run), checksPerRun)
		}
		for _, r := range run {
			seen[r]++
		}
	}
	for i, r := range refs {
		if seen[r] != 1 {
			t.Errorf("problem %d checked %d times: want once", i, seen[r])
		}
	}
	if len(f.runs) > 6 || most > checkRuns {
		t.Errorf("21 problems in %d runs, %d at once: want a few runs (%d checks each), at most %d at once",
			len(f.runs), most, checksPerRun, checkRuns)
	}
	// A judge error among others.
	broken := okProblem + "# check: judge\n"
	fresh := []string{okProblem + "# a\n", broken, okProblem + "# b\n", okProblem + "# c\n"}
	errs := ask(fresh)
	for i, err := range errs {
		if (i == 1) != (err != nil) || (i == 1 && !strings.Contains(err.Error(), "boom")) {
			t.Errorf("problem %d of a run with a judge error: %v", i, err)
		}
	}
	for i, r := range fresh {
		if _, ok := l.loadCheck(l.checkKey(r)); ok == (i == 1) {
			t.Errorf("problem %d cached %v after a judge error in its run", i, ok)
		}
	}
}

// TestCheckOverlapsBuild: the problem's check and the candidate's build run
// at the same time (each waits here to see the other start).
func TestCheckOverlapsBuild(t *testing.T) {
	f := &fakeChecks{}
	l := fakeLane(t, f, newFakeGPUs())
	l.batches.builds = make(chan struct{}, 2)
	checking, building := make(chan struct{}), make(chan struct{})
	l.checkRun = func(ctx context.Context, refs []string) ([]ProblemCheck, error) {
		close(checking)
		select {
		case <-building:
		case <-time.After(10 * time.Second):
			return nil, errors.New("no build started during the problem's check")
		}
		return f.run(ctx, refs)
	}
	l.compileRun = func(ctx context.Context, ref, cand, arch string) (map[string][]byte, error) {
		close(building)
		select {
		case <-checking:
		case <-time.After(10 * time.Second):
			return nil, errors.New("no check started during the build")
		}
		return map[string][]byte{"kiln_done.json": []byte("{}")}, nil
	}
	v := &verdict{v: tools.Verdict{Artifacts: map[string][]byte{}, Measurements: map[string]float64{}}}
	got, err := l.judgeInto(context.Background(), v, okProblem, "the candidate")
	if err != nil || !got.Pass {
		t.Fatalf("judged: %v, %+v", err, got)
	}
}

// BenchmarkProblemChecks: 16 new problems whose checks are asked for at
// once (as a rescore's first evaluations ask), through the real sandboxed
// "judge.py check" on the CPU: one process per check, all at once (how
// checks ran before the check queue), against the queue's defaults.
//
//	go test ./tools/torch2cuda -run '^$' -bench ProblemChecks -benchtime 1x
func BenchmarkProblemChecks(b *testing.B) {
	if testSkip != "" {
		b.Skip(testSkip)
	}
	src, err := os.ReadFile(filepath.Join("judge", "testdata", "ref_relu_matmul.py"))
	if err != nil {
		b.Fatal(err)
	}
	refs := make([]string, 16)
	for i := range refs {
		refs[i] = fmt.Sprintf("%s\n# problem %d\n", src, i)
	}
	for _, mode := range []struct {
		name        string
		perRun, run int
	}{{"process-each", 1, len(refs)}, {"queued", checksPerRun, checkRuns}} {
		b.Run(mode.name, func(b *testing.B) {
			savedPer, savedRuns := checksPerRun, checkRuns
			checksPerRun, checkRuns = mode.perRun, mode.run
			defer func() { checksPerRun, checkRuns = savedPer, savedRuns }()
			for range b.N {
				l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Device: "cpu", CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				var mu sync.Mutex
				runs := 0
				inner := l.checkRun
				l.checkRun = func(ctx context.Context, refs []string) ([]ProblemCheck, error) {
					mu.Lock()
					runs++
					mu.Unlock()
					return inner(ctx, refs)
				}
				var wg sync.WaitGroup
				errs := make([]error, len(refs))
				for i, ref := range refs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c, err := l.checkOne(context.Background(), ref)
						if err == nil && !c.OK {
							err = fmt.Errorf("check failed: %s %s", c.Reason, c.Diagnostic)
						}
						errs[i] = err
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(runs), "processes")
			}
		})
	}
}
