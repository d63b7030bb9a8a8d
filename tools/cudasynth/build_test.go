package cudasynth

import (
	"testing"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// TestCompileKeyPinned pins the cuda-compile job's cache key under fixed
// tool versions: a change here invalidates every cuda-synth compile cache.
func TestCompileKeyPinned(t *testing.T) {
	t.Parallel()
	reg := toolchain.FromReport(toolchain.Report{Tools: []toolchain.Tool{
		{Name: toolchain.NVCC, Path: "/usr/local/cuda/bin/nvcc", Version: "Cuda compilation tools, release 11.8, V11.8.89", Env: []string{"X=1", "Y=2"}}}})
	cfg := Config{Toolchains: reg}.withDefaults()
	l := &Lane{cfg: cfg, builds: newBuilds(cfg, nil)}
	j, _ := l.cudaJob("__global__ void k(){}\nint main(){}\n")
	if got, want := l.builds.Key(j), "e363dc0d48c9e6f188a2088f9bde629a2bb7121ff3bfbdd8304bc0cabe60076e"; got != want {
		t.Errorf("cuda-compile key = %s, want %s", got, want)
	}
}
