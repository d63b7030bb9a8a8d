// Matrix multiplication C = A * B of two 128x128 matrices with error
// handling, optimized for shared memory tiling: every 16x16 thread block
// loads one tile of A and one of B per step, so each global element is read
// N/TILE times instead of N times. Kernel time is measured with CUDA events
// and reported on stderr only.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) {
        fprintf(stderr, "CUDA failure in %s: %s\n", what, cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
}

constexpr int N = 128;
constexpr int TILE = 16;

__global__ void matmulTiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;

    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        const int aCol = t * TILE + threadIdx.x;
        const int bRow = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && aCol < n) ? A[row * n + aCol] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bRow < n && col < n) ? B[bRow * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
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
    check(cudaMalloc(&dA, bytes), "cudaMalloc A");
    check(cudaMalloc(&dB, bytes), "cudaMalloc B");
    check(cudaMalloc(&dC, bytes), "cudaMalloc C");
    check(cudaMemcpy(dA, hA, bytes, cudaMemcpyHostToDevice), "copy A");
    check(cudaMemcpy(dB, hB, bytes, cudaMemcpyHostToDevice), "copy B");

    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "event create");
    check(cudaEventCreate(&stop), "event create");

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    check(cudaEventRecord(start), "event record");
    matmulTiled<<<grid, block>>>(dA, dB, dC, N);
    check(cudaGetLastError(), "kernel launch");
    check(cudaEventRecord(stop), "event record");
    check(cudaEventSynchronize(stop), "event sync");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed time");
    fprintf(stderr, "matmul kernel: %.3f ms\n", ms);

    check(cudaMemcpy(hC, dC, bytes, cudaMemcpyDeviceToHost), "copy C");

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

    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(hA);
    free(hB);
    free(hC);
    return errors == 0 ? 0 : 1;
}
