package ptx2cuda

import (
	"testing"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// TestPTXKeyPinned pins the PTX job's cache key under fixed tool versions:
// a change here invalidates every ptx2cuda compile cache.
func TestPTXKeyPinned(t *testing.T) {
	t.Parallel()
	reg := toolchain.FromReport(toolchain.Report{Tools: []toolchain.Tool{
		{Name: toolchain.NVCC, Path: "/usr/local/cuda/bin/nvcc", Version: "Cuda compilation tools, release 11.8, V11.8.89", Env: []string{"X=1", "Y=2"}}}})
	cfg := Config{Toolchains: reg}.withDefaults()
	l := &Lane{cfg: cfg, builds: newBuilds(cfg, nil)}
	j := l.ptxJob("__global__ void k(){}\n", []string{"-O3"})
	if got, want := l.builds.Key(j), "9cda490bb9decedcd7bb0878d66869eab5e271ba8cff310d6d31accc0271f4be"; got != want {
		t.Errorf("ptx key = %s, want %s", got, want)
	}
}
