// 1-D radius-5 stencil, ported to HIP by hand.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define HIP_CHECK(cmd)                                                              \
  do {                                                                              \
    const hipError_t e_ = (cmd);                                                    \
    if (e_ != hipSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, hipGetErrorString(e_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (false)

constexpr int RADIUS = 5;
constexpr int BLOCK = 256;
constexpr int N = 50000;

__constant__ float c_weights[2 * RADIUS + 1];

__global__ void stencil1D(const float* in, float* out, int n) {
  __shared__ float tile[BLOCK + 2 * RADIUS];
  const int gid = blockIdx.x * BLOCK + threadIdx.x;
  const int sid = threadIdx.x + RADIUS;

  // Body of the tile, then the two halos (the first RADIUS threads load them).
  tile[sid] = gid < n ? in[gid] : 0.0f;
  if (threadIdx.x < RADIUS) {
    const int lo = gid - RADIUS;
    const int hi = gid + BLOCK;
    tile[threadIdx.x] = lo >= 0 ? in[lo] : 0.0f;
    tile[sid + BLOCK] = hi < n ? in[hi] : 0.0f;
  }
  __syncthreads();

  if (gid >= n) return;
  float acc = 0.0f;
  for (int k = 0; k <= 2 * RADIUS; ++k) {
    acc = fmaf(c_weights[k], tile[threadIdx.x + k], acc);
  }
  out[gid] = acc;
}

int main() {
  const float raw[2 * RADIUS + 1] = {1, 2, 4, 7, 10, 16, 10, 7, 4, 2, 1};
  float w[2 * RADIUS + 1];
  for (int k = 0; k < 2 * RADIUS + 1; ++k) w[k] = raw[k] / 64.0f;

  std::vector<float> in(N), out(N);
  for (int i = 0; i < N; ++i) in[i] = static_cast<float>((i * 13 + 7) % 256) / 256.0f - 0.5f;

  float* d_in = nullptr;
  float* d_out = nullptr;
  HIP_CHECK(hipMalloc(&d_in, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_out, N * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_in, in.data(), N * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_weights), w, sizeof(w), 0, hipMemcpyHostToDevice));

  const int grid = (N + BLOCK - 1) / BLOCK;
  stencil1D<<<grid, BLOCK>>>(d_in, d_out, N);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(out.data(), d_out, N * sizeof(float), hipMemcpyDeviceToHost));

  int mismatches = 0;
  double checksum = 0.0;
  for (int i = 0; i < N; ++i) {
    float ref = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; ++k) {
      const int j = i + k;
      ref += w[k + RADIUS] * ((j >= 0 && j < N) ? in[j] : 0.0f);
    }
    if (std::fabs(ref - out[i]) > 1e-5f) ++mismatches;
    checksum += out[i];
  }

  std::printf("n=%d radius=%d\n", N, RADIUS);
  std::printf("out[0]=%.6f out[1]=%.6f out[%d]=%.6f out[%d]=%.6f\n", out[0], out[1], N / 2, out[N / 2], N - 1,
              out[N - 1]);
  std::printf("checksum=%.6f\n", checksum);
  std::printf("mismatches=%d\n", mismatches);

  HIP_CHECK(hipFree(d_in));
  HIP_CHECK(hipFree(d_out));
  return mismatches == 0 ? 0 : 1;
}
