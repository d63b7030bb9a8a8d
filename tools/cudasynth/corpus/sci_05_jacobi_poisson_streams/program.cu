// Jacobi solver for two independent 64x64 Poisson problems (-lap u = f,
// u = 0 on the boundary), focused on overlapping work with CUDA streams:
// each problem has its own stream, pinned host buffers and asynchronous
// copies, so the transfers and sweeps of one problem can overlap with the
// other. Stream timings are measured with events and printed to stderr.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err__ = (call);                                            \
        if (err__ != cudaSuccess) {                                            \
            fprintf(stderr, "CUDA error: %s at %s:%d\n",                       \
                    cudaGetErrorString(err__), __FILE__, __LINE__);            \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

#define NX 64
#define NY 64
#define ITERS 300
#define NUM_PROBLEMS 2

// u_new = (sum of 4 neighbours + h^2 f) / 4; boundary stays 0.
__global__ void jacobiSweep(const float* __restrict__ u, float* __restrict__ unew, const float* __restrict__ h2f) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= NX || y >= NY) return;
    const int i = y * NX + x;
    if (x == 0 || y == 0 || x == NX - 1 || y == NY - 1) {
        unew[i] = 0.0f;
        return;
    }
    unew[i] = 0.25f * (((u[i - 1] + u[i + 1]) + (u[i - NX] + u[i + NX])) + h2f[i]);
}

static void cpuJacobi(const float* h2f, float* u, float* tmp) {
    for (int it = 0; it < ITERS; ++it) {
        for (int y = 0; y < NY; ++y)
            for (int x = 0; x < NX; ++x) {
                const int i = y * NX + x;
                if (x == 0 || y == 0 || x == NX - 1 || y == NY - 1) {
                    tmp[i] = 0.0f;
                    continue;
                }
                tmp[i] = 0.25f * (((u[i - 1] + u[i + 1]) + (u[i - NX] + u[i + NX])) + h2f[i]);
            }
        float* t = u;
        u = tmp;
        tmp = t;
    }
    // ITERS is even, so the result is back in the caller's u buffer.
}

int main() {
    const size_t cells = NX * NY, bytes = cells * sizeof(float);
    const float h = 1.0f / (NX - 1);

    float *hF[NUM_PROBLEMS], *hU[NUM_PROBLEMS];
    float *dF[NUM_PROBLEMS], *dA[NUM_PROBLEMS], *dB[NUM_PROBLEMS];
    cudaStream_t streams[NUM_PROBLEMS];
    cudaEvent_t start[NUM_PROBLEMS], stop[NUM_PROBLEMS];

    for (int p = 0; p < NUM_PROBLEMS; ++p) {
        CUDA_CHECK(cudaMallocHost(&hF[p], bytes));  // pinned: required for truly async copies
        CUDA_CHECK(cudaMallocHost(&hU[p], bytes));
        CUDA_CHECK(cudaMalloc(&dF[p], bytes));
        CUDA_CHECK(cudaMalloc(&dA[p], bytes));
        CUDA_CHECK(cudaMalloc(&dB[p], bytes));
        CUDA_CHECK(cudaStreamCreate(&streams[p]));
        CUDA_CHECK(cudaEventCreate(&start[p]));
        CUDA_CHECK(cudaEventCreate(&stop[p]));
        for (int y = 0; y < NY; ++y)
            for (int x = 0; x < NX; ++x) {
                // Problem 0: a point-like source in the middle; problem 1: uniform load.
                float f = 0.0f;
                if (p == 0) f = (x >= 30 && x < 34 && y >= 30 && y < 34) ? 1000.0f : 0.0f;
                else f = 10.0f;
                hF[p][y * NX + x] = h * h * f;
            }
    }

    dim3 block(16, 16);
    dim3 grid((NX + 15) / 16, (NY + 15) / 16);
    for (int p = 0; p < NUM_PROBLEMS; ++p) {
        CUDA_CHECK(cudaEventRecord(start[p], streams[p]));
        CUDA_CHECK(cudaMemcpyAsync(dF[p], hF[p], bytes, cudaMemcpyHostToDevice, streams[p]));
        CUDA_CHECK(cudaMemsetAsync(dA[p], 0, bytes, streams[p]));
        for (int it = 0; it < ITERS; it += 2) {
            jacobiSweep<<<grid, block, 0, streams[p]>>>(dA[p], dB[p], dF[p]);
            jacobiSweep<<<grid, block, 0, streams[p]>>>(dB[p], dA[p], dF[p]);
        }
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(hU[p], dA[p], bytes, cudaMemcpyDeviceToHost, streams[p]));
        CUDA_CHECK(cudaEventRecord(stop[p], streams[p]));
    }

    bool allMatch = true;
    float* ref = (float*)malloc(bytes);
    float* tmp = (float*)malloc(bytes);
    for (int p = 0; p < NUM_PROBLEMS; ++p) {
        CUDA_CHECK(cudaStreamSynchronize(streams[p]));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start[p], stop[p]));
        fprintf(stderr, "stream %d: %.3f ms\n", p, ms);

        for (size_t i = 0; i < cells; ++i) ref[i] = 0.0f;
        cpuJacobi(hF[p], ref, tmp);
        int mismatches = 0;
        double sum = 0.0;
        for (size_t i = 0; i < cells; ++i) {
            if (ref[i] != hU[p][i]) ++mismatches;
            sum += hU[p][i];
        }
        allMatch = allMatch && mismatches == 0;
        printf("problem %d: u(32,32)=%.6f u(16,16)=%.6f u(8,50)=%.6f sum=%.5f mismatches=%d\n", p,
               hU[p][32 * NX + 32], hU[p][16 * NX + 16], hU[p][50 * NX + 8], sum, mismatches);
    }
    printf("both streams match CPU: %s\n", allMatch ? "yes" : "no");

    for (int p = 0; p < NUM_PROBLEMS; ++p) {
        CUDA_CHECK(cudaEventDestroy(start[p]));
        CUDA_CHECK(cudaEventDestroy(stop[p]));
        CUDA_CHECK(cudaStreamDestroy(streams[p]));
        CUDA_CHECK(cudaFreeHost(hF[p]));
        CUDA_CHECK(cudaFreeHost(hU[p]));
        CUDA_CHECK(cudaFree(dF[p]));
        CUDA_CHECK(cudaFree(dA[p]));
        CUDA_CHECK(cudaFree(dB[p]));
    }
    free(ref);
    free(tmp);
    return allMatch ? 0 : 1;
}
