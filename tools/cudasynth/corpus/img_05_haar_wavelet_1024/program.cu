// Signal processing with a 1024-point Haar wavelet transform (full 10-level
// decomposition), optimized for shared memory: one block of 512 threads
// transforms one signal entirely in shared memory, halving the active
// threads each level. The forward transform stores (a+b)/2 and (a-b)/2; the
// inverse restores a = s+d, b = s-d. Inputs are multiples of 1/1024, so
// every step is exact and the reconstruction must be bit-identical. A batch
// of 16 signals runs as 16 blocks; small detail coefficients are counted
// with atomicAdd to estimate compressibility.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(e_), __FILE__, __LINE__);              \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define N 1024
#define BATCH 16

__global__ void haarForward(const float* in, float* out, int* smallCount, float threshold) {
    __shared__ float buf[N];
    __shared__ float tmp[N];
    const float* src = in + blockIdx.x * N;
    float* dst = out + blockIdx.x * N;
    for (int i = threadIdx.x; i < N; i += blockDim.x) buf[i] = src[i];
    __syncthreads();

    for (int len = N; len > 1; len >>= 1) {
        const int half = len >> 1;
        const int t = threadIdx.x;
        if (t < half) {
            const float a = buf[2 * t], b = buf[2 * t + 1];
            tmp[t] = 0.5f * (a + b);         // approximation
            tmp[half + t] = 0.5f * (a - b);  // detail
        }
        __syncthreads();
        for (int i = t; i < len; i += blockDim.x) buf[i] = tmp[i];
        __syncthreads();
    }

    int local = 0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        dst[i] = buf[i];
        if (i > 0 && fabsf(buf[i]) < threshold) ++local;
    }
    atomicAdd(smallCount, local);
}

__global__ void haarInverse(const float* in, float* out) {
    __shared__ float buf[N];
    __shared__ float tmp[N];
    for (int i = threadIdx.x; i < N; i += blockDim.x) buf[i] = in[blockIdx.x * N + i];
    __syncthreads();
    for (int len = 2; len <= N; len <<= 1) {
        const int half = len >> 1;
        const int t = threadIdx.x;
        if (t < half) {
            const float s = buf[t], d = buf[half + t];
            tmp[2 * t] = s + d;
            tmp[2 * t + 1] = s - d;
        }
        __syncthreads();
        for (int i = t; i < len; i += blockDim.x) buf[i] = tmp[i];
        __syncthreads();
    }
    for (int i = threadIdx.x; i < N; i += blockDim.x) out[blockIdx.x * N + i] = buf[i];
}

int main() {
    const size_t total = (size_t)N * BATCH;
    float* h = (float*)malloc(total * sizeof(float));
    float* coeffs = (float*)malloc(total * sizeof(float));
    float* recon = (float*)malloc(total * sizeof(float));
    // Piecewise-smooth signals: steps plus a slow integer ramp, in units of 1/1024.
    for (int b = 0; b < BATCH; ++b)
        for (int n = 0; n < N; ++n) {
            int v = (n / (64 + 16 * b)) % 3 * 300 + n / 8 + ((n * (b + 3)) % 5);
            h[b * N + n] = (float)v / 1024.0f;
        }

    float *dIn, *dCoeffs, *dRecon;
    int* dSmall;
    CUDA_CHECK(cudaMalloc(&dIn, total * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dCoeffs, total * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dRecon, total * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dSmall, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dIn, h, total * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dSmall, 0, sizeof(int)));

    haarForward<<<BATCH, N / 2>>>(dIn, dCoeffs, dSmall, 1.0f / 256.0f);
    haarInverse<<<BATCH, N / 2>>>(dCoeffs, dRecon);
    CUDA_CHECK(cudaGetLastError());
    int small = 0;
    CUDA_CHECK(cudaMemcpy(coeffs, dCoeffs, total * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(recon, dRecon, total * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&small, dSmall, sizeof(int), cudaMemcpyDeviceToHost));

    int exact = 1;
    for (size_t i = 0; i < total; ++i)
        if (recon[i] != h[i]) exact = 0;

    printf("signals=%d length=%d levels=10\n", BATCH, N);
    printf("signal 0: mean=%.6f d[1]=%.6f d[2]=%.6f d[3]=%.6f d[512]=%.6f\n", coeffs[0], coeffs[1], coeffs[2],
           coeffs[3], coeffs[512]);
    // Energy of the detail coefficients per level for signal 0 (level 1 = finest).
    printf("signal 0 detail energy by level:");
    for (int level = 1, len = N / 2; len >= 1; ++level, len >>= 1) {
        double e = 0.0;
        for (int i = len; i < 2 * len; ++i) e += (double)coeffs[i] * coeffs[i];
        printf(" L%d=%.4f", level, e);
    }
    printf("\n");
    printf("small detail coefficients (|d| < 1/256): %d of %d\n", small, BATCH * (N - 1));
    printf("perfect reconstruction: %s\n", exact ? "yes" : "no");

    cudaFree(dIn); cudaFree(dCoeffs); cudaFree(dRecon); cudaFree(dSmall);
    free(h); free(coeffs); free(recon);
    return exact ? 0 : 1;
}
