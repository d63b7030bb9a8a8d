// Fused residual add + LayerNorm for a transformer block: y = LN(x + r) *
// gamma + beta over 4096 rows of width 256, one warp per row. Each lane holds
// eight strided elements in registers; mean and variance are reduced with
// __shfl_down_sync in double precision and broadcast with __shfl_sync. The
// inputs are dyadic rationals, so the sums are exact in any order and only
// the final scaling rounds. The host recomputes everything in double.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e = (call);                                               \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(e), __FILE__, __LINE__);               \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

const int ROWS = 4096;
const int HIDDEN = 256;
const int WARPS_PER_BLOCK = 4;
const double EPS = 1e-5;

__device__ double warpSum(double v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return __shfl_sync(0xffffffffu, v, 0);
}

template <int WIDTH>
__global__ void residualLayerNorm(const float* x, const float* r, const float* gamma, const float* beta, float* y,
                                  float* hOut, float2* stats, int rows) {
    constexpr int PER_LANE = WIDTH / 32;
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= rows) return;  // whole warps leave together
    const float* xr = x + (size_t)row * WIDTH;
    const float* rr = r + (size_t)row * WIDTH;
    float h[PER_LANE];
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k) {
        h[k] = xr[lane + 32 * k] + rr[lane + 32 * k];
        hOut[(size_t)row * WIDTH + lane + 32 * k] = h[k];
        sum += h[k];
    }
    const double mean = warpSum(sum) / WIDTH;
    double sq = 0.0;
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k) sq += (h[k] - mean) * (h[k] - mean);
    const double var = warpSum(sq) / WIDTH;
    const double rstd = 1.0 / sqrt(var + EPS);
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k) {
        const int c = lane + 32 * k;
        y[(size_t)row * WIDTH + c] = (float)((h[k] - mean) * rstd * gamma[c] + beta[c]);
    }
    if (lane == 0) stats[row] = make_float2((float)mean, (float)rstd);
}

int main() {
    const size_t n = (size_t)ROWS * HIDDEN;
    std::vector<float> x(n), r(n), gamma(HIDDEN), beta(HIDDEN), y(n), h(n);
    std::vector<float2> stats(ROWS);
    unsigned s = 0xBADC0DEu;
    auto rnd = [&s]() { return (s = s * 1664525u + 1013904223u) >> 9; };
    for (size_t i = 0; i < n; ++i) {
        x[i] = (float)((int)(rnd() % 512) - 256) / 64.0f;  // multiples of 1/64
        r[i] = (float)((int)(rnd() % 256) - 128) / 128.0f;
    }
    for (int c = 0; c < HIDDEN; ++c) {
        gamma[c] = 1.0f + (float)(c % 16 - 8) / 32.0f;
        beta[c] = (float)(c % 8 - 4) / 16.0f;
    }
    float *dX, *dR, *dG, *dB, *dY, *dH;
    float2* dStats;
    CUDA_CHECK(cudaMalloc(&dX, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dR, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dG, HIDDEN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, HIDDEN * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dY, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dH, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dStats, ROWS * sizeof(float2)));
    CUDA_CHECK(cudaMemcpy(dX, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dR, r.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dG, gamma.data(), HIDDEN * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, beta.data(), HIDDEN * sizeof(float), cudaMemcpyHostToDevice));
    residualLayerNorm<HIDDEN><<<ROWS / WARPS_PER_BLOCK, 32 * WARPS_PER_BLOCK>>>(dX, dR, dG, dB, dY, dH, dStats, ROWS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y.data(), dY, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h.data(), dH, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(stats.data(), dStats, ROWS * sizeof(float2), cudaMemcpyDeviceToHost));

    double maxErr = 0.0, absSum = 0.0;
    int residualErrors = 0;
    for (int row = 0; row < ROWS; ++row) {
        double mean = 0.0, var = 0.0;
        for (int c = 0; c < HIDDEN; ++c) mean += (double)x[(size_t)row * HIDDEN + c] + r[(size_t)row * HIDDEN + c];
        mean /= HIDDEN;
        for (int c = 0; c < HIDDEN; ++c) {
            const double d = (double)x[(size_t)row * HIDDEN + c] + r[(size_t)row * HIDDEN + c] - mean;
            var += d * d;
        }
        var /= HIDDEN;
        const double rstd = 1.0 / std::sqrt(var + EPS);
        for (int c = 0; c < HIDDEN; ++c) {
            const size_t i = (size_t)row * HIDDEN + c;
            if (h[i] != x[i] + r[i]) ++residualErrors;
            const double ref = ((double)x[i] + r[i] - mean) * rstd * gamma[c] + beta[c];
            maxErr = std::fmax(maxErr, std::fabs(ref - y[i]));
            absSum += std::fabs(ref);
        }
    }
    const bool ok = maxErr < 1e-5 && residualErrors == 0;
    printf("rows=%d hidden=%d\n", ROWS, HIDDEN);
    printf("row 0: mean=%.5f rstd=%.5f y[0..3]=%.4f %.4f %.4f %.4f\n", stats[0].x, stats[0].y, y[0], y[1], y[2], y[3]);
    printf("row %d: mean=%.5f rstd=%.5f y[252..255]=%.4f %.4f %.4f %.4f\n", ROWS - 1, stats[ROWS - 1].x,
           stats[ROWS - 1].y, y[n - 4], y[n - 3], y[n - 2], y[n - 1]);
    printf("reference sum |y|=%.2f\n", absSum);
    printf("max |gpu - cpu| < 1e-5: %s, residual errors=%d\n", ok ? "PASS" : "FAIL", residualErrors);
    CUDA_CHECK(cudaFree(dX)); CUDA_CHECK(cudaFree(dR)); CUDA_CHECK(cudaFree(dG)); CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dY)); CUDA_CHECK(cudaFree(dH)); CUDA_CHECK(cudaFree(dStats));
    return ok ? 0 : 1;
}
