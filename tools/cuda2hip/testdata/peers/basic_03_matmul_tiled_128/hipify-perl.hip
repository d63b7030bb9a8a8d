#include "hip/hip_runtime.h"
// Matrix multiplication C = A * B of two 128x128 matrices with error
// handling, optimized for shared memory tiling: every 16x16 thread block
// loads one tile of A and one of B per step, so each global element is read
// N/TILE times instead of N times. Kernel time is measured with HIP events
// and reported on stderr only.
#include <cstdio>
#include <cstdlib>
#include <hip/hip_runtime.h>

static void check(hipError_t err, const char* what) {
    if (err != hipSuccess) {
        fprintf(stderr, "CUDA failure in %s: %s\n", what, hipGetErrorString(err));
        exit(EXIT_FAILURE);
    }
}

constexpr int N = 128;
constexpr int TILE = 16;

__global__ void matmulTiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int row = hipBlockIdx_y * TILE + hipThreadIdx_y;
    const int col = hipBlockIdx_x * TILE + hipThreadIdx_x;
    float acc = 0.0f;

    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        const int aCol = t * TILE + hipThreadIdx_x;
        const int bRow = t * TILE + hipThreadIdx_y;
        As[hipThreadIdx_y][hipThreadIdx_x] = (row < n && aCol < n) ? A[row * n + aCol] : 0.0f;
        Bs[hipThreadIdx_y][hipThreadIdx_x] = (bRow < n && col < n) ? B[bRow * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[hipThreadIdx_y][k] * Bs[k][hipThreadIdx_x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}

int main() {
    const size_t bytes = (size_t)N * N * sizeof(float);
    float* hA = (float*)malloc(bytes);
    float* hB = (float*)malloc(bytes);
    float* hC = (float*)malloc(bytes);
    if (!hA || !hB || !hC) {
        fprintf(stderr, "host malloc failed\n");
        return 1;
    }
    // Small integers divided by 8: products and sums stay exact in float.
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            hA[i * N + j] = (float)((i * 3 + j * 5) % 17 - 8) / 8.0f;
            hB[i * N + j] = (float)((i * 7 + j * 2) % 13 - 6) / 8.0f;
        }

    float *dA, *dB, *dC;
    check(hipMalloc((void**)&dA, bytes), "hipMalloc A");
    check(hipMalloc((void**)&dB, bytes), "hipMalloc B");
    check(hipMalloc((void**)&dC, bytes), "hipMalloc C");
    check(hipMemcpy(dA, hA, bytes, hipMemcpyHostToDevice), "copy A");
    check(hipMemcpy(dB, hB, bytes, hipMemcpyHostToDevice), "copy B");

    hipEvent_t start, stop;
    check(hipEventCreate(&start), "event create");
    check(hipEventCreate(&stop), "event create");

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    check(hipEventRecord(start, NULL), "event record");
    hipLaunchKernelGGL(matmulTiled, grid, block, 0, 0, dA, dB, dC, N);
    check(hipGetLastError(), "kernel launch");
    check(hipEventRecord(stop, NULL), "event record");
    check(hipEventSynchronize(stop), "event sync");
    float ms = 0.0f;
    check(hipEventElapsedTime(&ms, start, stop), "elapsed time");
    fprintf(stderr, "matmul kernel: %.3f ms\n", ms);

    check(hipMemcpy(hC, dC, bytes, hipMemcpyDeviceToHost), "copy C");

    int errors = 0;
    double trace = 0.0, checksum = 0.0;
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j) {
            float ref = 0.0f;
            for (int k = 0; k < N; ++k) ref += hA[i * N + k] * hB[k * N + j];
            if (ref != hC[i * N + j]) ++errors;
            checksum += hC[i * N + j];
        }
        trace += hC[i * N + i];
    }

    printf("C[0][0]=%.4f C[5][77]=%.4f C[127][127]=%.4f\n", hC[0], hC[5 * N + 77], hC[N * N - 1]);
    printf("trace=%.4f checksum=%.4f\n", trace, checksum);
    printf("verification: %s (%d mismatches)\n", errors == 0 ? "PASS" : "FAIL", errors);

    hipEventDestroy(start);
    hipEventDestroy(stop);
    hipFree(dA);
    hipFree(dB);
    hipFree(dC);
    free(hA);
    free(hB);
    free(hC);
    return errors == 0 ? 0 : 1;
}
