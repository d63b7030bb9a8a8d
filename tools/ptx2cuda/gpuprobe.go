package ptx2cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// ErrGPUUnusable means programs cannot use the GPU inside the sandbox (the
// probe program failed), so a run stage would blame every answer for the
// host's fault. Verify and Complete return it as an error, not a verdict.
var ErrGPUUnusable = errors.New("ptx2cuda: the GPU is not usable in the sandbox")

// gpuProbeSource checks every CUDA call it makes and the kernel's result.
const gpuProbeSource = `#include <cstdio>
#include <cuda_runtime.h>
__global__ void kiln_gpu_probe(int *p) { p[threadIdx.x] = 2 * threadIdx.x + 1; }
static int fail(const char *what, cudaError_t e) {
    fprintf(stderr, "%s: %s (%d)\n", what, cudaGetErrorString(e), (int)e);
    return 2;
}
int main() {
    int *d = 0, h[64];
    cudaError_t e = cudaMalloc(&d, sizeof(h));
    if (e != cudaSuccess) return fail("cudaMalloc", e);
    kiln_gpu_probe<<<1, 64>>>(d);
    if ((e = cudaGetLastError()) != cudaSuccess) return fail("launch", e);
    if ((e = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost)) != cudaSuccess) return fail("cudaMemcpy", e);
    for (int i = 0; i < 64; i++)
        if (h[i] != 2 * i + 1) { fprintf(stderr, "wrong result at %d: %d\n", i, h[i]); return 3; }
    printf("kiln gpu probe ok\n");
    return 0;
}
`

// gpuProbeBinary builds (or takes from the cache) the probe executable
// for the lane's target.
func (l *Lane) gpuProbeBinary(ctx context.Context) ([]byte, error) {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(l.cfg.SM, "sm_", "compute_", 1), l.cfg.SM),
		"-o", "probe", "probe.cu"}
	res, err := l.compile(ctx, job{name: "gpu-probe", tool: toolchain.NVCC, args: args,
		inputs: map[string][]byte{"probe.cu": []byte(gpuProbeSource)}, outputs: []string{"probe"}})
	if err != nil {
		return nil, fmt.Errorf("gpu probe: %w", err)
	}
	if !res.ok() || len(res.e.Files["probe"]) == 0 {
		return nil, fmt.Errorf("gpu probe: build failed: %s", firstLines(string(res.e.Stderr), 5))
	}
	return res.e.Files["probe"], nil
}

// checkGPU runs the probe in a sandbox box, the way answers run, until it
// passes once; a failure is ErrGPUUnusable with the probe's stderr. kept
// is a probe executable kept with a verdict (nil: build it, or take it
// from the compile cache).
func (l *Lane) checkGPU(ctx context.Context, kept []byte) error {
	l.gpuMu.Lock()
	defer l.gpuMu.Unlock()
	if l.gpuOK {
		return nil
	}
	bin := kept
	if len(bin) == 0 {
		var err error
		if bin, err = l.gpuProbeBinary(ctx); err != nil {
			return err
		}
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return fmt.Errorf("gpu probe: %w", err)
	}
	defer box.Close()
	if err := box.WriteFile("probe", bin, 0o755); err != nil {
		return fmt.Errorf("gpu probe: %w", err)
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./probe"}, Limits: l.cfg.RunLimits, GPU: true})
	if err != nil {
		return fmt.Errorf("gpu probe: %w", err)
	}
	if !res.OK() || !strings.Contains(string(res.Stdout), "kiln gpu probe ok") {
		return fmt.Errorf("%w: probe %s: %s", ErrGPUUnusable, res.Describe(), firstLines(string(res.Stderr), 3))
	}
	l.gpuOK = true
	return nil
}
