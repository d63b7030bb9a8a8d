//go:build gpu

package main

// TestRefineTorch2CUDAOnGPU is TestRefineTorch2CUDA on a GPU host with a
// CUDA build of torch: build on the CPU host, run on the GPU host from
// cmd/kiln of a copy of the repository (the fixtures are read from
// ../../tools/torch2cuda/testdata/synth), with KILN_CGROUP_PARENT set to a
// delegated cgroup subtree where the sandbox needs one:
//
//	go test -c -tags gpu -o kiln-gpu.test ./cmd/kiln     # on the CPU host
//	cd cmd/kiln && ../../kiln-gpu.test -test.run 'RefineTorch2CUDAOnGPU' -test.v -test.timeout 40m

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
)

// TestRefineTorch2CUDAOnGPU: here the elementwise answers are judged and
// pass, so only conv is targeted (level1 is half passed); the two sound
// synthesised problems pass the GPU problem check and are accepted, their
// tasks queued in round 1 and answered there; the eight others are
// dropped with the same reasons as on the CPU host.
func TestRefineTorch2CUDAOnGPU(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
	defer cancel()
	var extra []string
	if cg := os.Getenv("KILN_CGROUP_PARENT"); cg != "" {
		extra = append(extra, "--cgroup-parent", cg)
	}
	data := runTorch2CUDARefine(t, ctx, extra...)
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "t2c-refine-refine")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Round(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := engine.DecodeRoundRecord(rec.Record)
	if err != nil {
		t.Fatal(err)
	}
	var targeted []string
	for _, ch := range d.Choices {
		targeted = append(targeted, ch.Category)
	}
	if !slices.Equal(targeted, []string{"conv"}) || len(d.Synth) != 1 {
		t.Fatalf("targeted %v, synthesis %+v; want conv only", targeted, d.Synth)
	}
	conv := d.Synth[0]
	var accepted []int
	for _, a := range conv.Accepted {
		accepted = append(accepted, a.Index)
	}
	if !slices.Equal(accepted, []int{1, 2}) || len(conv.Pending) != 0 || d.SynthTasks != 2 {
		t.Errorf("accepted %v (want 1, 2), pending %+v, %d synthesised tasks", accepted, conv.Pending, d.SynthTasks)
	}
	want := map[int]string{3: "returns_input", 4: "nondeterministic", 5: "too_large", 6: "trivial_output", 7: "nonfinite_output",
		8: "static: uses import os", 9: "near duplicate", 10: "benchmark/benchmark/level1/1_Conv2d_ReLU_BiasAdd.py"}
	for _, r := range conv.Rejected {
		if w, ok := want[r.Index]; !ok || !strings.Contains(r.Reason, w) {
			t.Errorf("rejected #%d (%s): %s; want %q", r.Index, r.Stage, r.Reason, w)
		}
		delete(want, r.Index)
	}
	if len(want) > 0 {
		t.Errorf("not rejected: %v", want)
	}
	res, err := st.Results(ctx, c.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	synth := 0
	for _, r := range res {
		if r.Task.Meta["origin"] == "resynthesis" {
			synth++
			if r.Verdict.TaskFault() || r.Verdict.Pending() {
				t.Errorf("synthesised task %s: task fault %v pending %v: %.300s", r.Task.Key, r.Verdict.TaskFault(), r.Verdict.Pending(), r.Verdict.Diagnostic)
			}
		}
	}
	if synth != 2 {
		t.Errorf("%d synthesised results in round 1, want 2", synth)
	}
	// The report gives fast_1 before and after per category beside the
	// pass rates (elementwise's answers are judged and timed here).
	code, out, errs := runKiln(t, ctx, "report", "--data", data, "t2c-refine-refine")
	if code != 0 || !strings.Contains(out, "FAST_1 BEFORE") || !strings.Contains(out, "FAST_1 AFTER") {
		t.Errorf("kiln report (exit %d, %s):\n%s", code, errs, out)
	}
	t.Logf("kiln report:\n%s", out)
}
