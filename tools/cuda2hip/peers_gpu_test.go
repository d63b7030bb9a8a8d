//go:build gpu

package cuda2hip

// The peer suite's GPU phase, on a GPU host (nvcc 13 there, no nvcc 11.8,
// no hipcc; no Go needed): every pending verdict TestPeersSaveForGPU saved
// is completed with Lane.Complete, as `kiln rescore --pending` completes a
// campaign's, from the kept executables alone.
//
//	# CPU host (nvcc 11.8, hipcc), repository root (carry/ is git-ignored):
//	go test ./tools/cuda2hip -run TestPeersSaveForGPU -count=1 -timeout 30m -args -cuda2hip.gpudir=$PWD/carry/cuda2hip-peers
//	go test -c -tags gpu -o carry/cuda2hip-gpu.test ./tools/cuda2hip && gzip -f carry/cuda2hip-gpu.test
//	# GPU host (carry carry/cuda2hip-peers and carry/cuda2hip-gpu.test.gz), repository root, as root;
//	# the sandbox wants the memory and pids controllers:
//	gunzip -c carry/cuda2hip-gpu.test.gz > /tmp/c2h.test && chmod +x /tmp/c2h.test
//	echo $$ > /sys/fs/cgroup/cgroup.procs; echo "+memory +pids" > /sys/fs/cgroup/cgroup.subtree_control
//	cd tools/cuda2hip && /tmp/c2h.test -test.run TestPeersGPU -test.v -cuda2hip.gpudir=../../carry/cuda2hip-peers

import (
	"context"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// TestPeersGPU completes the saved verdicts on this host's GPU: every
// peer passes (the HIP program prints what the CUDA program prints), every
// twin fails at the run with its class.
func TestPeersGPU(t *testing.T) {
	if *gpuDirFlag == "" {
		t.Fatal("-cuda2hip.gpudir is required (the folder TestPeersSaveForGPU wrote)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	reg, err := kittest.LoadToolchains(ctx, *gpuDirFlag)
	if err != nil {
		t.Fatal(err)
	}
	if !reg.GPU().Present {
		t.Fatal("no GPU found: run this test on the GPU host")
	}
	saved, err := kittest.LoadVerdicts(*gpuDirFlag)
	if err != nil {
		t.Fatal(err)
	}
	h := testHost
	h.Toolchains = func(context.Context, bool) (*toolchain.Registry, error) { return reg, nil }
	tl, err := open(ctx, h, sandboxes.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	l := tl.(*Lane)
	peers, twins := 0, 0
	for _, s := range saved {
		v, err := l.Complete(ctx, s.Item, s.Verdict)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		got := outcome(v)
		t.Logf("%-72s %-14s at %-4s %.300s", s.Name, got, v.Stage, firstLines(v.Diagnostic, 3))
		switch {
		case got == outPending:
			t.Errorf("%s: still pending %v", s.Name, tools.PendingStages(v))
		case s.Expect == outPass:
			peers++
			if got != outPass {
				t.Errorf("%s: a peer fails: %s at %s: %s", s.Name, got, v.Stage, v.Diagnostic)
			}
		default:
			twins++
			if got == outPass || v.Stage != cudasynth.StageRun {
				t.Errorf("%s: a twin gives %s at %s, want a failed run", s.Name, got, v.Stage)
			} else if s.Expect != string(anyFailure) && got != s.Expect {
				t.Errorf("%s: a twin fails with %s, want %s: %s", s.Name, got, s.Expect, v.Diagnostic)
			}
		}
	}
	t.Logf("%d peers, %d twins completed on %v", peers, twins, reg.GPU().Names)
}
