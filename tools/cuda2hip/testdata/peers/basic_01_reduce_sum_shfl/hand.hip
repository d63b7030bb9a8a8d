// HIP port of the shuffle reduction. Ported by hand: the kernel launch keeps
// the triple-chevron syntax (hipcc accepts it), warp reductions use __shfl_down
// (HIP has no *_sync shuffles), and the warp width comes from the platform:
// AMD wavefronts are 32 (RDNA, the default for gfx11) or 64 (CDNA) lanes.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

#define HIP_CHECK(expr)                                                          \
  do {                                                                           \
    hipError_t status = (expr);                                                  \
    if (status != hipSuccess) {                                                  \
      fprintf(stderr, "HIP error %s (%d) at %s:%d\n", hipGetErrorString(status), \
              (int)status, __FILE__, __LINE__);                                  \
      exit(EXIT_FAILURE);                                                        \
    }                                                                            \
  } while (0)

#ifdef __HIP_PLATFORM_AMD__
#  if defined(__GFX9__)
#    define KWARP 64
#  else
#    define KWARP 32
#  endif
#else
#  define KWARP 32
#endif

static constexpr int kN = 16384;
static constexpr int kThreads = 256;

__device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
  for (int delta = KWARP / 2; delta >= 1; delta /= 2) {
    v += __shfl_down(v, delta, KWARP);
  }
  return v;
}

__global__ __launch_bounds__(kThreads) void reduceSumKernel(const int* in, int n, int* out) {
  __shared__ int partial[kThreads / KWARP];
  const int tid = static_cast<int>(threadIdx.x);
  const int stride = static_cast<int>(blockDim.x * gridDim.x);
  int acc = 0;
  int idx = static_cast<int>(blockIdx.x * blockDim.x) + tid;
  while (idx < n) {
    acc += in[idx];
    idx += stride;
  }
  acc = warp_sum(acc);
  const int lane = tid % KWARP;
  const int wid = tid / KWARP;
  if (lane == 0) {
    partial[wid] = acc;
  }
  __syncthreads();
  if (wid == 0) {
    const int nwarps = static_cast<int>(blockDim.x) / KWARP;
    int v = lane < nwarps ? partial[lane] : 0;
    v = warp_sum(v);
    if (lane == 0) {
      atomicAdd(out, v);
    }
  }
}

int main() {
  int* host = static_cast<int*>(malloc(kN * sizeof(int)));
  if (host == nullptr) {
    fprintf(stderr, "host allocation failed\n");
    return 1;
  }
  long long expected = 0;
  for (int i = 0; i < kN; ++i) {
    host[i] = (i * 37 + 11) % 101 - 50;
    expected += host[i];
  }

  int* dIn = nullptr;
  int* dOut = nullptr;
  HIP_CHECK(hipMalloc(&dIn, kN * sizeof(int)));
  HIP_CHECK(hipMalloc(&dOut, sizeof(int)));
  HIP_CHECK(hipMemcpy(dIn, host, kN * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dOut, 0, sizeof(int)));

  const int blocks = 16;
  reduceSumKernel<<<blocks, kThreads>>>(dIn, kN, dOut);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());

  int total = 0;
  HIP_CHECK(hipMemcpy(&total, dOut, sizeof(int), hipMemcpyDeviceToHost));

  printf("elements: %d\n", kN);
  printf("gpu sum: %d\n", total);
  printf("cpu sum: %lld\n", expected);
  printf("result: %s\n", static_cast<long long>(total) == expected ? "PASS" : "FAIL");

  HIP_CHECK(hipFree(dIn));
  HIP_CHECK(hipFree(dOut));
  free(host);
  return static_cast<long long>(total) == expected ? 0 : 1;
}
