//go:build gpu

package torch2cuda

// The validation of synthesised problems on a GPU host: the checks that
// wait on a CPU host (TestValidateSyntheses: the two sound problems of
// testdata/synth/reply_conv.md pending) run on the GPU and finish. Build on
// the CPU host, run on the GPU host from this folder (the fixtures are read
// from testdata/synth):
//
//	go test -c -tags gpu -o t2c-gpu.test ./tools/torch2cuda     # on the CPU host
//	cd tools/torch2cuda && ../../t2c-gpu.test -test.run 'ValidateSynthesesOnGPU' -test.v -test.timeout 30m

import (
	"errors"
	"os"
	"testing"

	"github.com/kiln-dev/kiln/refinement"
)

// TestValidateSynthesesOnGPU screens the fixture reply with the GPU
// problem check: the two sound problems are accepted (nothing pending),
// the others rejected with the same reasons as on the CPU host (the too
// large one by its 2.4 GB of inputs and outputs, over the 1 GiB budget).
// Each accepted problem's check is then the cached one the judge uses
// (CheckTask gives no task fault).
func TestValidateSynthesesOnGPU(t *testing.T) {
	needSandbox(t)
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if why := l.cannotJudge(); why != "" {
		t.Fatalf("run this test on the GPU host: %s", why)
	}
	reply, err := os.ReadFile("testdata/synth/reply_conv.md")
	if err != nil {
		t.Fatal(err)
	}
	acc, rej := screenReply(t, l, string(reply))
	for _, r := range rej {
		if errors.Is(r.Err, refinement.ErrPending) {
			t.Errorf("block %d still pending on a GPU host: %v", r.Candidate.Index, r.Err)
		}
	}
	checkOutcomes(t, acc, rej, "accepted")
	for _, c := range acc {
		cs, err := l.CheckProblems(t.Context(), []string{c.Files[ReferenceFile]})
		if err != nil || !cs[0].OK || !cs[0].Cached {
			t.Errorf("accepted block %d: check %+v %v", c.Index, cs, err)
			continue
		}
		t.Logf("block %d (%s): forward %.4g ms on %s, peak %v bytes", c.Index, c.Function, val(cs[0].RefMS), cs[0].Env.Device, val64(cs[0].PeakBytes))
	}
}
