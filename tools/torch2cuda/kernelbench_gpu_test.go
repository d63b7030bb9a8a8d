//go:build gpu

package torch2cuda

// KernelBench as shipped, on one GPU: the problem check over every problem
// of levels 1-3 of a KernelBench checkout (250 problems), in the sandbox,
// as `kiln torch2cuda check-problems` runs it. The checkout's files never
// enter this repository: the test takes its folder from KERNELBENCH_DIR
// and skips without it. On the CPU host:
//
//	git -C /work/.mirror/ScalingIntelligence+KernelBench/repo archive HEAD KernelBench/level1 \
//	    KernelBench/level2 KernelBench/level3 | tar -x -C carry/     # carry/KernelBench/level{1,2,3}
//	go test -c -tags gpu -o carry/t2c-gpu.test ./tools/torch2cuda
//
// and on the GPU host, from tools/torch2cuda, with a delegated cgroup
// subtree (gpu/bench.sh's cgroups()):
//
//	KERNELBENCH_DIR=../../carry/KernelBench ../../carry/t2c-gpu.test -test.run TestKernelBenchProblems -test.v -test.timeout 30m
//
// It prints the table (problem, ok or the reason, reference ms, where the
// inputs were drawn, peak GPU memory, input size) and fails for a problem
// whose reference cannot run, for fewer than 250 problems, or when the
// checks take 10 minutes or more.

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestKernelBenchProblems(t *testing.T) {
	dir := os.Getenv("KERNELBENCH_DIR")
	if dir == "" {
		t.Skip("KERNELBENCH_DIR is not set: the folder of a KernelBench checkout (or its KernelBench/ folder)")
	}
	needSandbox(t)
	probs, err := problemsToCheck(dir, "1,2,3")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if why := l.checkPending(); why != "" {
		t.Fatalf("cannot check here: %s: run this test on the GPU host", why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	start := time.Now()
	cs, err := checkInChunks(ctx, l, probs, testLogWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	var table bytes.Buffer
	if err := printChecks(&table, probs, cs, took); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	if len(probs) != 250 {
		t.Errorf("%d problems in levels 1-3, want KernelBench's 250", len(probs))
	}
	for i, c := range cs {
		if !c.OK {
			t.Errorf("%s: %s: %.400s", probs[i].ID, c.Reason, c.Diagnostic)
		}
	}
	if took >= 10*time.Minute {
		t.Errorf("checks took %s, want under 10 min", took.Round(time.Second))
	}
	// Again: every check comes from the cache, and no judge runs.
	refs := make([]string, len(probs))
	for i, p := range probs {
		refs[i] = p.Source
	}
	l.checkRun = func(context.Context, []string) ([]ProblemCheck, error) {
		t.Error("a cached problem was checked again")
		return nil, context.Canceled
	}
	again, err := l.CheckProblems(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range again {
		if !c.Cached {
			t.Errorf("%s: not from the cache", probs[i].ID)
		}
	}
}
