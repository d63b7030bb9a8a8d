// Graph processing: PageRank on a directed graph with 1024 nodes stored as
// an edge list, optimized for memory coalescing. One thread per edge reads
// src/dst from two structure-of-arrays buffers (coalesced) and pushes its
// contribution to the destination with a float atomicAdd. A grid-stride loop
// lets a fixed grid cover all 8192 edges.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CUDA_CHECK(ans)                                                        \
    {                                                                          \
        cudaError_t code = (ans);                                              \
        if (code != cudaSuccess) {                                             \
            fprintf(stderr, "GPUassert: %s %s %d\n", cudaGetErrorString(code), \
                    __FILE__, __LINE__);                                       \
            exit(code);                                                        \
        }                                                                      \
    }

const int NUM_NODES = 1024;
const int EDGES_PER_NODE = 8;
const int NUM_EDGES = NUM_NODES * EDGES_PER_NODE;
const float DAMPING = 0.85f;
const int ITERATIONS = 30;

__global__ void initRanks(float* next, int n, float base) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) next[i] = base;
}

__global__ void pushContributions(const int* __restrict__ src, const int* __restrict__ dst,
                                  const int* __restrict__ outDegree, const float* __restrict__ rank,
                                  float* next, int numEdges, float damping) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < numEdges; e += blockDim.x * gridDim.x) {
        const int s = src[e];
        atomicAdd(&next[dst[e]], damping * rank[s] / (float)outDegree[s]);
    }
}

static unsigned int mix(unsigned int x) {
    x ^= x >> 17;
    x *= 0xed5ad4bbU;
    x ^= x >> 11;
    x *= 0xac4c1b51U;
    x ^= x >> 15;
    return x;
}

int main() {
    std::vector<int> src(NUM_EDGES), dst(NUM_EDGES), outDeg(NUM_NODES, 0);
    for (int e = 0; e < NUM_EDGES; ++e) {
        src[e] = e % NUM_NODES;
        // Skewed destinations: low ids are more popular.
        const unsigned int h = mix(e + 1);
        int d = (int)((h % NUM_NODES) * (h % NUM_NODES) / NUM_NODES);
        if (d == src[e]) d = (d + 1) % NUM_NODES;
        dst[e] = d;
        outDeg[src[e]]++;
    }

    int *dSrc, *dDst, *dOutDeg;
    float *dRank, *dNext;
    CUDA_CHECK(cudaMalloc(&dSrc, NUM_EDGES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDst, NUM_EDGES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dOutDeg, NUM_NODES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dRank, NUM_NODES * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dNext, NUM_NODES * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dSrc, src.data(), NUM_EDGES * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dDst, dst.data(), NUM_EDGES * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dOutDeg, outDeg.data(), NUM_NODES * sizeof(int), cudaMemcpyHostToDevice));

    const int threads = 256, blocks = 16;
    initRanks<<<blocks, threads>>>(dRank, NUM_NODES, 1.0f / NUM_NODES);
    CUDA_CHECK(cudaGetLastError());
    for (int it = 0; it < ITERATIONS; ++it) {
        initRanks<<<blocks, threads>>>(dNext, NUM_NODES, (1.0f - DAMPING) / NUM_NODES);
        pushContributions<<<blocks, threads>>>(dSrc, dDst, dOutDeg, dRank, dNext, NUM_EDGES, DAMPING);
        CUDA_CHECK(cudaGetLastError());
        std::swap(dRank, dNext);
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> rank(NUM_NODES);
    CUDA_CHECK(cudaMemcpy(rank.data(), dRank, NUM_NODES * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU reference in double precision.
    std::vector<double> ref(NUM_NODES, 1.0 / NUM_NODES), nxt(NUM_NODES);
    for (int it = 0; it < ITERATIONS; ++it) {
        std::fill(nxt.begin(), nxt.end(), (1.0 - DAMPING) / NUM_NODES);
        for (int e = 0; e < NUM_EDGES; ++e) nxt[dst[e]] += DAMPING * ref[src[e]] / outDeg[src[e]];
        ref.swap(nxt);
    }
    double l1 = 0.0, total = 0.0;
    for (int i = 0; i < NUM_NODES; ++i) {
        l1 += fabs(ref[i] - rank[i]);
        total += rank[i];
    }

    std::vector<int> order(NUM_NODES);
    for (int i = 0; i < NUM_NODES; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return ref[a] > ref[b] || (ref[a] == ref[b] && a < b); });

    printf("nodes=%d edges=%d iterations=%d\n", NUM_NODES, NUM_EDGES, ITERATIONS);
    printf("rank sum=%.4f\n", total);
    printf("top 5 nodes (rank x N):");
    for (int k = 0; k < 5; ++k) printf(" %d:%.3f", order[k], rank[order[k]] * NUM_NODES);
    printf("\n");
    printf("L1 error vs CPU < 1e-4: %s\n", l1 < 1e-4 ? "PASS" : "FAIL");

    cudaFree(dSrc);
    cudaFree(dDst);
    cudaFree(dOutDeg);
    cudaFree(dRank);
    cudaFree(dNext);
    return l1 < 1e-4 ? 0 : 1;
}
