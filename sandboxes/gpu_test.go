//go:build gpu

package sandboxes

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestGPURun builds a CUDA program with nvcc in a box (no GPU needed) and
// runs it with Spec.GPU (devices bound, address-space limit off) and
// without (no device visible: it must fail). Run on a GPU host:
//
//	go test -c -tags gpu -o carry/sandboxes-gpu/sandboxes.test ./sandboxes/
func TestGPURun(t *testing.T) {
	if len(gpuDevices()) == 0 {
		t.Skip("no GPU device nodes")
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		nvcc = "/usr/local/cuda/bin/nvcc"
		if _, err := os.Stat(nvcc); err != nil {
			t.Skip("no nvcc")
		}
	}
	t.Log(testRunner.Capabilities().String())
	b := openBox(t)
	src := `#include <cstdio>
__global__ void add(float *x, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }
int main() { size_t n = (size_t)1 << 28; float *d;
  cudaError_t e = cudaMalloc(&d, n * 4); if (e != cudaSuccess) { printf("cudaMalloc: %s\n", cudaGetErrorString(e)); return 2; }
  cudaMemset(d, 0, n * 4); add<<<(n + 255) / 256, 256>>>(d, n); float h = 0;
  e = cudaMemcpy(&h, d + n - 1, 4, cudaMemcpyDeviceToHost); if (e != cudaSuccess) { printf("kernel: %s\n", cudaGetErrorString(e)); return 3; }
  printf("last=%g\n", h); return h == 1 ? 0 : 1; }`
	if err := b.WriteFile("k.cu", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	build := Limits{Wall: 4 * time.Minute, CPU: 4 * time.Minute, Memory: NoLimit, RSS: 8 << 30, FileSize: 1 << 30}
	res := run(t, b, Spec{Argv: []string{nvcc, "-arch=sm_90", "-o", "k", "k.cu"}, Limits: build})
	if !res.OK() {
		t.Fatalf("nvcc in the box: %s: %s %s", res.Describe(), clip(string(res.Stdout), 2000), clip(string(res.Stderr), 2000))
	}
	runLim := Limits{Wall: time.Minute, RSS: 4 << 30}
	res = run(t, b, Spec{Argv: []string{"./k"}, GPU: true, Limits: runLim})
	t.Logf("with GPU: %s in %s: %q %q", res.Describe(), res.Wall, res.Stdout, clip(string(res.Stderr), 500))
	if !res.OK() || !strings.Contains(string(res.Stdout), "last=1") {
		t.Errorf("CUDA program with Spec.GPU failed")
	}
	res = run(t, b, Spec{Argv: []string{"./k"}, Limits: runLim})
	t.Logf("without GPU: %s: %q", res.Describe(), res.Stdout)
	if res.OK() {
		t.Errorf("CUDA program ran without Spec.GPU")
	}
	if smi, err := exec.LookPath("nvidia-smi"); err == nil {
		res = run(t, b, Spec{Argv: []string{smi, "-L"}, GPU: true, Limits: runLim})
		t.Logf("nvidia-smi -L in the box: %s: %q %q", res.Describe(), res.Stdout, clip(string(res.Stderr), 300))
	}
}
