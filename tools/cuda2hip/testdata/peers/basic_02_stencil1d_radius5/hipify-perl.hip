#include "hip/hip_runtime.h"
// 1D stencil computation with radius 5, optimized for shared memory usage.
// Each block stages its slice of the input plus a halo of RADIUS elements on
// each side in shared memory; the 11 stencil weights live in __constant__
// memory, where every thread of a warp reads the same weight at once.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <hip/hip_runtime.h>

#define CHECK_CUDA(x)                                                         \
    do {                                                                      \
        hipError_t e = (x);                                                  \
        if (e != hipSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                \
                    hipGetErrorString(e));                                   \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define RADIUS 5
#define BLOCK 256
#define N 50000

__constant__ float c_weights[2 * RADIUS + 1];

__global__ void stencil1D(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[BLOCK + 2 * RADIUS];

    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const int l = threadIdx.x + RADIUS;

    tile[l] = (g < n) ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        const int left = g - RADIUS;
        const int right = g + BLOCK;
        tile[l - RADIUS] = (left >= 0 && left < n) ? in[left] : 0.0f;
        tile[l + BLOCK] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();

    if (g < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -RADIUS; k <= RADIUS; ++k)
            acc += c_weights[k + RADIUS] * tile[l + k];
        out[g] = acc;
    }
}

int main(void) {
    // Weights are multiples of 1/64 and inputs multiples of 1/256, so every
    // partial sum is exact in float and GPU and CPU agree bit for bit.
    const float h_weights[2 * RADIUS + 1] = {1, 2, 4, 7, 10, 16, 10, 7, 4, 2, 1};
    float w[2 * RADIUS + 1];
    for (int k = 0; k < 2 * RADIUS + 1; ++k) w[k] = h_weights[k] / 64.0f;

    float* h_in = (float*)malloc(N * sizeof(float));
    float* h_out = (float*)malloc(N * sizeof(float));
    for (int i = 0; i < N; ++i) h_in[i] = (float)((i * 13 + 7) % 256) / 256.0f - 0.5f;

    float *d_in, *d_out;
    CHECK_CUDA(hipMalloc((void**)&d_in, N * sizeof(float)));
    CHECK_CUDA(hipMalloc((void**)&d_out, N * sizeof(float)));
    CHECK_CUDA(hipMemcpy(d_in, h_in, N * sizeof(float), hipMemcpyHostToDevice));
    CHECK_CUDA(hipMemcpyToSymbol(HIP_SYMBOL(c_weights), w, sizeof(w)));

    const int blocks = (N + BLOCK - 1) / BLOCK;
    hipLaunchKernelGGL(stencil1D, dim3(blocks), dim3(BLOCK), 0, 0, d_in, d_out, N);
    CHECK_CUDA(hipGetLastError());
    CHECK_CUDA(hipMemcpy(h_out, d_out, N * sizeof(float), hipMemcpyDeviceToHost));

    int mismatches = 0;
    double checksum = 0.0;
    for (int i = 0; i < N; ++i) {
        float ref = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            const int j = i + k;
            ref += w[k + RADIUS] * ((j >= 0 && j < N) ? h_in[j] : 0.0f);
        }
        if (fabsf(ref - h_out[i]) > 1e-5f) ++mismatches;
        checksum += h_out[i];
    }

    printf("n=%d radius=%d\n", N, RADIUS);
    printf("out[0]=%.6f out[1]=%.6f out[%d]=%.6f out[%d]=%.6f\n", h_out[0], h_out[1], N / 2, h_out[N / 2],
           N - 1, h_out[N - 1]);
    printf("checksum=%.6f\n", checksum);
    printf("mismatches=%d\n", mismatches);

    CHECK_CUDA(hipFree(d_in));
    CHECK_CUDA(hipFree(d_out));
    free(h_in);
    free(h_out);
    return mismatches == 0 ? 0 : 1;
}
