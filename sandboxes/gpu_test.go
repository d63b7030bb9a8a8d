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

// TestGPUFaults: a spinning kernel is ended by the wall-clock limit with its
// process, an illegal address kills only its own process, and a fresh
// process right after each gets a clean CUDA context (a process that hit a
// CUDA error is never reused: every run is a new process).
func TestGPUFaults(t *testing.T) {
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
	b := openBox(t)
	progs := map[string]string{
		"spin.cu": `#include <cstdio>
__global__ void spin(volatile int *f) { while (*f == 0) {} }
int main() { int *d; cudaMalloc(&d, 4); cudaMemset(d, 0, 4); spin<<<1, 1>>>(d);
  cudaError_t e = cudaDeviceSynchronize(); printf("sync: %s\n", cudaGetErrorString(e)); return 0; }`,
		"bad.cu": `#include <cstdio>
__global__ void bad(int *p) { p[threadIdx.x] = 1; }
int main() { bad<<<1, 32>>>((int *)0x10); cudaError_t e = cudaDeviceSynchronize();
  printf("sync: %s\n", cudaGetErrorString(e)); return e == cudaSuccess ? 0 : 4; }`,
		"ok.cu": `#include <cstdio>
__global__ void inc(int *p) { p[threadIdx.x] += 1; }
int main() { int *d, h[32]; cudaMalloc(&d, sizeof h); cudaMemset(d, 0, sizeof h); inc<<<1, 32>>>(d);
  cudaError_t e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int s = 0; for (int i = 0; i < 32; i++) s += h[i]; printf("sum=%d err=%s\n", s, cudaGetErrorString(e)); return s == 32 ? 0 : 1; }`,
	}
	build := Limits{Wall: 4 * time.Minute, CPU: 4 * time.Minute, Memory: NoLimit, RSS: 8 << 30, FileSize: 1 << 30}
	for name, src := range progs {
		if err := b.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		res := run(t, b, Spec{Argv: []string{nvcc, "-arch=sm_90", "-o", strings.TrimSuffix(name, ".cu"), name}, Limits: build})
		if !res.OK() {
			t.Fatalf("nvcc %s: %s: %s", name, res.Describe(), clip(string(res.Stderr), 2000))
		}
	}
	runLim := Limits{Wall: 5 * time.Second, CPU: 30 * time.Second, RSS: 4 << 30}
	okRun := func(after string) {
		res := run(t, b, Spec{Argv: []string{"./ok"}, GPU: true, Limits: runLim})
		t.Logf("after %s: %s in %s: %q", after, res.Describe(), res.Wall, res.Stdout)
		if !res.OK() || !strings.Contains(string(res.Stdout), "sum=32") {
			t.Errorf("a clean program after %s did not get a clean context: %s %q %q", after, res.Describe(), res.Stdout, clip(string(res.Stderr), 500))
		}
	}
	okRun("nothing")
	res := run(t, b, Spec{Argv: []string{"./spin"}, GPU: true, Limits: runLim})
	t.Logf("spinning kernel: %s (killed: %q) in %s", res.Describe(), res.Killed, res.Wall)
	if res.Outcome() != OutcomeTimeout || res.Wall > 15*time.Second {
		t.Errorf("spinning kernel: outcome %s after %s, want timeout near 5s", res.Outcome(), res.Wall)
	}
	okRun("a spinning kernel")
	res = run(t, b, Spec{Argv: []string{"./bad"}, GPU: true, Limits: runLim})
	t.Logf("illegal address: %s: %q", res.Describe(), res.Stdout)
	if res.OK() || !strings.Contains(string(res.Stdout), "illegal") {
		t.Errorf("illegal address: %s %q, want a failed run reporting the illegal address", res.Describe(), res.Stdout)
	}
	okRun("an illegal address")
}
