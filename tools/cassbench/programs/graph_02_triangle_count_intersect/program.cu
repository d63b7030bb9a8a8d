// Triangle counting on an undirected graph of 4096 vertices (ring-local
// edges plus long-range shortcuts). Edges are oriented from the lower to the
// higher id and stored in CSR with sorted rows, so each triangle u<v<w is
// found exactly once, by edge (u,v), as the common out-neighbour w. One
// thread per oriented edge (grid-stride loop) merges the two sorted rows,
// bumps per-vertex counts with atomicAdd, and a __shfl_down_sync reduction
// gives one 64-bit atomicAdd per warp for the total.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <set>
#include <algorithm>
#include <iterator>
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

const int V = 4096;
const int LOCAL_EDGES = 5;
const int WINDOW = 48;

__device__ unsigned countCommon(const int* colIdx, int aBegin, int aEnd, int bBegin, int bEnd, int u, int v,
                                unsigned* perVertex) {
    unsigned found = 0;
    while (aBegin < aEnd && bBegin < bEnd) {
        const int x = colIdx[aBegin], y = colIdx[bBegin];
        if (x < y) {
            ++aBegin;
        } else if (y < x) {
            ++bBegin;
        } else {
            ++found;
            atomicAdd(&perVertex[u], 1u);
            atomicAdd(&perVertex[v], 1u);
            atomicAdd(&perVertex[x], 1u);
            ++aBegin;
            ++bBegin;
        }
    }
    return found;
}

__global__ void countTriangles(const int* rowPtr, const int* colIdx, const int* edgeSrc, int numEdges,
                               unsigned* perVertex, unsigned long long* total) {
    unsigned long long mine = 0;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < numEdges; e += blockDim.x * gridDim.x) {
        const int u = edgeSrc[e], v = colIdx[e];
        mine += countCommon(colIdx, rowPtr[u], rowPtr[u + 1], rowPtr[v], rowPtr[v + 1], u, v, perVertex);
    }
    for (int offset = 16; offset > 0; offset >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, mine);
}

int main() {
    std::vector<std::set<int>> out(V);  // oriented: lower id -> higher id
    unsigned s = 4242u;
    auto rnd = [&s]() { return s = s * 1664525u + 1013904223u; };
    auto addEdge = [&out](int a, int b) {
        if (a == b) return;
        out[std::min(a, b)].insert(std::max(a, b));
    };
    for (int u = 0; u < V; ++u) {
        for (int k = 0; k < LOCAL_EDGES; ++k) addEdge(u, (u + 1 + (int)((rnd() >> 8) % WINDOW)) % V);
        if (u % 3 == 0) addEdge(u, (int)((rnd() >> 8) % V));
    }
    std::vector<int> rowPtr(V + 1, 0), colIdx, edgeSrc;
    for (int u = 0; u < V; ++u) {
        for (int v : out[u]) {
            colIdx.push_back(v);
            edgeSrc.push_back(u);
        }
        rowPtr[u + 1] = (int)colIdx.size();
    }
    const int numEdges = (int)colIdx.size();

    int *dRow, *dCol, *dSrc;
    unsigned* dPer;
    unsigned long long* dTotal;
    CUDA_CHECK(cudaMalloc(&dRow, (V + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCol, numEdges * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dSrc, numEdges * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dPer, V * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&dTotal, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(dRow, rowPtr.data(), (V + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCol, colIdx.data(), numEdges * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dSrc, edgeSrc.data(), numEdges * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dPer, 0, V * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(dTotal, 0, sizeof(unsigned long long)));
    countTriangles<<<40, 256>>>(dRow, dCol, dSrc, numEdges, dPer, dTotal);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long total = 0;
    std::vector<unsigned> per(V);
    CUDA_CHECK(cudaMemcpy(&total, dTotal, sizeof(total), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(per.data(), dPer, V * sizeof(unsigned), cudaMemcpyDeviceToHost));

    // CPU reference with std::set_intersection, and the degree statistics.
    std::vector<unsigned> refPer(V, 0);
    std::vector<long long> degree(V, 0);
    unsigned long long refTotal = 0;
    for (int u = 0; u < V; ++u)
        for (int v : out[u]) {
            ++degree[u];
            ++degree[v];
            std::vector<int> common;
            std::set_intersection(out[u].begin(), out[u].end(), out[v].begin(), out[v].end(), std::back_inserter(common));
            refTotal += common.size();
            for (int w : common) ++refPer[u], ++refPer[v], ++refPer[w];
        }
    long long wedges = 0;
    int inTriangle = 0, best = 0, mismatches = 0;
    for (int v = 0; v < V; ++v) {
        wedges += degree[v] * (degree[v] - 1) / 2;
        if (per[v] != refPer[v]) ++mismatches;
        if (per[v] > 0) ++inTriangle;
        if (per[v] > per[best]) best = v;
    }
    printf("vertices=%d undirected edges=%d\n", V, numEdges);
    printf("triangles=%llu (cpu %llu)\n", total, refTotal);
    printf("vertices in a triangle=%d max per vertex=%u at %d\n", inTriangle, per[best], best);
    printf("global clustering coefficient=%.6f\n", 3.0 * (double)refTotal / (double)wedges);
    printf("per-vertex mismatches=%d\n", mismatches);
    CUDA_CHECK(cudaFree(dRow)); CUDA_CHECK(cudaFree(dCol)); CUDA_CHECK(cudaFree(dSrc));
    CUDA_CHECK(cudaFree(dPer)); CUDA_CHECK(cudaFree(dTotal));
    return (total == refTotal && mismatches == 0) ? 0 : 1;
}
