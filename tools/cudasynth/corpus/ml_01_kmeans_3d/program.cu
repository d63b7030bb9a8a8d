// K-means clustering of 4096 points in 3D space (k = 8), optimized for
// reducing global atomic traffic: the update step accumulates per-cluster
// coordinate sums and counts in shared memory with shared-memory atomics,
// then each block flushes its 8 partial results to global memory with one
// atomicAdd per value. Coordinates are multiples of 1/64, so the float sums
// are exact and the result does not depend on the order of the atomics.
#include <cstdio>
#include <cstdlib>
#include <cfloat>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        cudaError_t e = (call);                                             \
        if (e != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                     \
                    cudaGetErrorString(e), __FILE__, __LINE__);             \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

#define N_POINTS 4096
#define K 8
#define DIM 3
#define MAX_ITERS 20
#define THREADS 256

__global__ void assignClusters(const float* __restrict__ points, const float* __restrict__ centroids,
                               int* __restrict__ assignment, int* changes, int n) {
    __shared__ float sCent[K * DIM];
    if (threadIdx.x < K * DIM) sCent[threadIdx.x] = centroids[threadIdx.x];
    __syncthreads();

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float px = points[i * DIM], py = points[i * DIM + 1], pz = points[i * DIM + 2];
    int best = 0;
    float bestDist = FLT_MAX;
    for (int c = 0; c < K; ++c) {
        const float dx = px - sCent[c * DIM], dy = py - sCent[c * DIM + 1], dz = pz - sCent[c * DIM + 2];
        const float d = dx * dx + dy * dy + dz * dz;
        if (d < bestDist) {
            bestDist = d;
            best = c;
        }
    }
    if (assignment[i] != best) {
        assignment[i] = best;
        atomicAdd(changes, 1);
    }
}

__global__ void accumulateClusters(const float* __restrict__ points, const int* __restrict__ assignment,
                                   float* sums, int* counts, int n) {
    __shared__ float sSums[K * DIM];
    __shared__ int sCounts[K];
    if (threadIdx.x < K * DIM) sSums[threadIdx.x] = 0.0f;
    if (threadIdx.x < K) sCounts[threadIdx.x] = 0;
    __syncthreads();

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int c = assignment[i];
        atomicAdd(&sSums[c * DIM + 0], points[i * DIM + 0]);
        atomicAdd(&sSums[c * DIM + 1], points[i * DIM + 1]);
        atomicAdd(&sSums[c * DIM + 2], points[i * DIM + 2]);
        atomicAdd(&sCounts[c], 1);
    }
    __syncthreads();

    if (threadIdx.x < K * DIM) atomicAdd(&sums[threadIdx.x], sSums[threadIdx.x]);
    if (threadIdx.x < K) atomicAdd(&counts[threadIdx.x], sCounts[threadIdx.x]);
}

__global__ void updateCentroids(float* centroids, const float* sums, const int* counts) {
    const int t = threadIdx.x;
    if (t < K * DIM) {
        const int c = t / DIM;
        if (counts[c] > 0) centroids[t] = sums[t] / (float)counts[c];
    }
}

static unsigned int lcg(unsigned int& s) {
    s = s * 1103515245u + 12345u;
    return (s >> 8) & 0xffffu;
}

int main() {
    static float hPoints[N_POINTS * DIM];
    unsigned int seed = 2024u;
    for (int i = 0; i < N_POINTS; ++i) {
        const int c = i % K;
        const float center[DIM] = {(float)(c % 2) * 8.0f + 4.0f, (float)((c / 2) % 2) * 8.0f + 4.0f,
                                   (float)(c / 4) * 8.0f + 4.0f};
        for (int d = 0; d < DIM; ++d) {
            const int offset = (int)(lcg(seed) % 257) - 128;  // [-128, 128] / 64 = [-2, 2]
            hPoints[i * DIM + d] = center[d] + offset / 64.0f;
        }
    }
    float hCentroids[K * DIM];
    for (int c = 0; c < K; ++c)
        for (int d = 0; d < DIM; ++d) hCentroids[c * DIM + d] = hPoints[(c * 3) * DIM + d];

    float *dPoints, *dCentroids, *dSums;
    int *dAssign, *dCounts, *dChanges;
    CUDA_CHECK(cudaMalloc(&dPoints, sizeof(hPoints)));
    CUDA_CHECK(cudaMalloc(&dCentroids, sizeof(hCentroids)));
    CUDA_CHECK(cudaMalloc(&dSums, K * DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dAssign, N_POINTS * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCounts, K * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dChanges, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dPoints, hPoints, sizeof(hPoints), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCentroids, hCentroids, sizeof(hCentroids), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dAssign, 0xff, N_POINTS * sizeof(int)));

    const int blocks = (N_POINTS + THREADS - 1) / THREADS;
    int iter = 0, changes = N_POINTS;
    while (iter < MAX_ITERS && changes > 0) {
        CUDA_CHECK(cudaMemset(dChanges, 0, sizeof(int)));
        CUDA_CHECK(cudaMemset(dSums, 0, K * DIM * sizeof(float)));
        CUDA_CHECK(cudaMemset(dCounts, 0, K * sizeof(int)));
        assignClusters<<<blocks, THREADS>>>(dPoints, dCentroids, dAssign, dChanges, N_POINTS);
        accumulateClusters<<<blocks, THREADS>>>(dPoints, dAssign, dSums, dCounts, N_POINTS);
        updateCentroids<<<1, 32>>>(dCentroids, dSums, dCounts);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(&changes, dChanges, sizeof(int), cudaMemcpyDeviceToHost));
        ++iter;
        printf("iteration %d: %d reassigned\n", iter, changes);
    }

    int hCounts[K];
    CUDA_CHECK(cudaMemcpy(hCentroids, dCentroids, sizeof(hCentroids), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hCounts, dCounts, sizeof(hCounts), cudaMemcpyDeviceToHost));
    for (int c = 0; c < K; ++c)
        printf("cluster %d: count=%d centroid=(%.4f, %.4f, %.4f)\n", c, hCounts[c], hCentroids[c * DIM],
               hCentroids[c * DIM + 1], hCentroids[c * DIM + 2]);
    int total = 0;
    for (int c = 0; c < K; ++c) total += hCounts[c];
    printf("all points assigned: %s\n", total == N_POINTS ? "yes" : "no");

    cudaFree(dPoints); cudaFree(dCentroids); cudaFree(dSums);
    cudaFree(dAssign); cudaFree(dCounts); cudaFree(dChanges);
    return total == N_POINTS ? 0 : 1;
}
