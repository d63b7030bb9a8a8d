package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// TestBenchCompile runs `kiln bench compile` on two corpus programs: every
// mode compiles both, the cached modes answer from the cache (the verb
// itself fails when a compile is or is not cached against expectation) and
// are much faster than cold, and the JSON holds the command compared.
func TestBenchCompile(t *testing.T) {
	longOnly(t, "kiln bench compile, a measurement of nvcc with and without the compile cache")
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "bench", "compile", "--data", t.TempDir(), "--limit", "2", "--rounds", "1", "--jobs", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var b cudasynth.CompileBench
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if b.Programs != 2 || b.Jobs != 2 || len(b.ColdSeconds) != 1 || len(b.Failed) != 0 {
		t.Errorf("bench: %+v", b)
	}
	if !slices.Contains(b.Command, "-gencode") || !slices.Contains(b.Command, "program.cu") {
		t.Errorf("command %v is not the lane's nvcc command", b.Command)
	}
	if b.PlainMedian <= 0 || b.ColdMedian <= 0 || b.CachedMedian <= 0 || b.DiskCachedMedian <= 0 {
		t.Errorf("a mode took no time: %+v", b)
	}
	if b.ColdOverCached < 10 || b.ColdOverDisk < 10 {
		t.Errorf("the cache is not much faster than cold: %+v", b)
	}
	if code, _, errs := runKiln(t, ctx, "bench", "nothing"); code != 2 {
		t.Errorf("unknown bench: exit %d, %s", code, errs)
	}
}
