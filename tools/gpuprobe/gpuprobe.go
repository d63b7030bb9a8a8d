// Package gpuprobe checks that programs can use the NVIDIA GPU inside the
// sandbox before a lane blames an answer's run for the host's fault: a
// small CUDA program, built through the lane's build jobs with the lane's
// nvcc arguments, run the way answers run until it passes once.
package gpuprobe

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// Source checks every CUDA call it makes and the kernel's result.
const Source = `#include <cstdio>
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

// Probe is a lane's GPU check. It is safe for concurrent use.
type Probe struct {
	builds   *buildjob.Runner
	args     []string // nvcc's, before -o probe probe.cu
	sandbox  *sandboxes.Runner
	limits   sandboxes.Limits
	unusable error

	mu sync.Mutex
	ok bool // the probe passed in the sandbox
}

// New returns a probe built by builds with nvcc args (the target flags;
// the output and input names follow) and run in sandbox under limits. A
// failed run is an error wrapping unusable, the lane's sentinel.
func New(builds *buildjob.Runner, args []string, sandbox *sandboxes.Runner, limits sandboxes.Limits, unusable error) *Probe {
	return &Probe{builds: builds, args: args, sandbox: sandbox, limits: limits, unusable: unusable}
}

// Binary builds (or takes from the compile cache) the probe executable.
func (p *Probe) Binary(ctx context.Context) ([]byte, error) {
	args := append(append([]string{}, p.args...), "-o", "probe", "probe.cu")
	res, err := p.builds.Run(ctx, buildjob.Command("gpu-probe", toolchain.NVCC, args,
		map[string][]byte{"probe.cu": []byte(Source)}, "probe"))
	if err != nil {
		return nil, fmt.Errorf("gpu probe: %w", err)
	}
	if !res.OK() || len(res.Entry.Files["probe"]) == 0 {
		return nil, fmt.Errorf("gpu probe: build failed: %s", buildjob.FirstLines(string(res.Entry.Stderr), 5))
	}
	return res.Entry.Files["probe"], nil
}

// Check runs the probe in a sandbox box, the way answers run, until it
// passes once; a failure wraps the unusable sentinel with the probe's
// stderr. kept is a probe executable kept with a record (nil: build it,
// or take it from the compile cache).
func (p *Probe) Check(ctx context.Context, kept []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ok {
		return nil
	}
	bin := kept
	if len(bin) == 0 {
		var err error
		if bin, err = p.Binary(ctx); err != nil {
			return err
		}
	}
	box, err := p.sandbox.Open(ctx)
	if err != nil {
		return fmt.Errorf("gpu probe: %w", err)
	}
	defer box.Close()
	if err := box.WriteFile("probe", bin, 0o755); err != nil {
		return fmt.Errorf("gpu probe: %w", err)
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./probe"}, Limits: p.limits, GPU: true})
	if err != nil {
		return fmt.Errorf("gpu probe: %w", err)
	}
	if !res.OK() || !strings.Contains(string(res.Stdout), "kiln gpu probe ok") {
		return fmt.Errorf("%w: probe %s: %s", p.unusable, res.Describe(), buildjob.FirstLines(string(res.Stderr), 3))
	}
	p.ok = true
	return nil
}
