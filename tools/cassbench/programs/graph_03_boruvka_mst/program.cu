// Minimum spanning tree with Boruvka's algorithm on an undirected graph of
// 4096 vertices (a ring plus three random edges per vertex, integer weights
// with ties). An edge's key packs its weight over its index, so keys are
// unique and the MST is unique. Each round: every component finds its
// lightest outgoing edge with a 64-bit atomicMin, roots hook onto the
// component across that edge (a mutual choice is broken by the smaller id),
// and pointer jumping flattens the forest again. The host compares the
// total weight with Kruskal's algorithm.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <numeric>
#include <algorithm>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                          \
    do {                                                                          \
        const cudaError_t err = (call);                                           \
        if (err != cudaSuccess) {                                                 \
            fprintf(stderr, "%s:%d: CUDA error %d: %s\n", __FILE__, __LINE__,     \
                    (int)err, cudaGetErrorString(err));                           \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

typedef unsigned long long u64;
const int V = 4096;
const u64 NO_EDGE = ~0ull;

__global__ void resetMin(u64* minKey, int n) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += blockDim.x * gridDim.x) minKey[v] = NO_EDGE;
}

__global__ void findMinEdges(const int* eu, const int* ev, const int* ew, int numEdges, const int* comp, u64* minKey) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < numEdges; e += blockDim.x * gridDim.x) {
        const int cu = comp[eu[e]], cv = comp[ev[e]];
        if (cu == cv) continue;
        const u64 key = ((u64)ew[e] << 32) | (unsigned)e;
        atomicMin(&minKey[cu], key);
        atomicMin(&minKey[cv], key);
    }
}

__global__ void hookRoots(const int* eu, const int* ev, const int* comp, const u64* minKey, int* parent,
                          unsigned char* inMst, int* hooks, int n) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += blockDim.x * gridDim.x) {
        parent[v] = comp[v];
        if (comp[v] != v || minKey[v] == NO_EDGE) continue;
        const int e = (int)(minKey[v] & 0xffffffffu);
        const int other = comp[eu[e]] == v ? comp[ev[e]] : comp[eu[e]];
        inMst[e] = 1;  // both endpoints may mark it: same value
        if (minKey[other] == minKey[v] && v < other) continue;  // mutual choice: the smaller id stays root
        parent[v] = other;
        atomicAdd(hooks, 1);
    }
}

__global__ void jumpPointers(int* parent, int n, int* changed) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += blockDim.x * gridDim.x) {
        const int p = parent[v], gp = parent[p];
        if (p != gp) {
            parent[v] = gp;
            *changed = 1;
        }
    }
}

static int findRoot(std::vector<int>& uf, int x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

int main() {
    std::vector<int> eu, ev, ew;
    unsigned s = 99991u;
    auto rnd = [&s]() { return (s = s * 1103515245u + 12345u) >> 8; };
    for (int v = 0; v < V; ++v) {
        eu.push_back(v), ev.push_back((v + 1) % V), ew.push_back(500 + (int)(rnd() % 500));
        for (int k = 0; k < 3; ++k) {
            const int u = (int)(rnd() % V);
            if (u == v) continue;
            eu.push_back(v), ev.push_back(u), ew.push_back(1 + (int)(rnd() % 1000));
        }
    }
    const int E = (int)eu.size();
    std::vector<int> comp(V);
    std::iota(comp.begin(), comp.end(), 0);

    int *dEu, *dEv, *dEw, *dComp, *dParent, *dFlags;  // flags: hooks, changed
    u64* dMin;
    unsigned char* dInMst;
    CUDA_CHECK(cudaMalloc(&dEu, E * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dEv, E * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dEw, E * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dComp, V * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dParent, V * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFlags, 2 * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dMin, V * sizeof(u64)));
    CUDA_CHECK(cudaMalloc(&dInMst, E));
    CUDA_CHECK(cudaMemcpy(dEu, eu.data(), E * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dEv, ev.data(), E * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dEw, ew.data(), E * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dComp, comp.data(), V * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dInMst, 0, E));

    const int blocks = 32, threads = 256;
    int components = V, rounds = 0;
    printf("vertices=%d edges=%d\n", V, E);
    while (components > 1 && rounds < 32) {
        resetMin<<<blocks, threads>>>(dMin, V);
        findMinEdges<<<blocks, threads>>>(dEu, dEv, dEw, E, dComp, dMin);
        CUDA_CHECK(cudaMemset(dFlags, 0, 2 * sizeof(int)));
        hookRoots<<<blocks, threads>>>(dEu, dEv, dComp, dMin, dParent, dInMst, dFlags, V);
        CUDA_CHECK(cudaGetLastError());
        int flags[2];
        do {
            CUDA_CHECK(cudaMemset(dFlags + 1, 0, sizeof(int)));
            jumpPointers<<<blocks, threads>>>(dParent, V, dFlags + 1);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpy(flags, dFlags, sizeof(flags), cudaMemcpyDeviceToHost));
        } while (flags[1]);
        std::swap(dComp, dParent);
        ++rounds;
        if (flags[0] == 0) break;  // no component has an outgoing edge left
        components -= flags[0];
        printf("round %d: %d hooks, %d components\n", rounds, flags[0], components);
    }
    std::vector<unsigned char> inMst(E);
    CUDA_CHECK(cudaMemcpy(inMst.data(), dInMst, E, cudaMemcpyDeviceToHost));
    int mstEdges = 0;
    long long mstWeight = 0;
    for (int e = 0; e < E; ++e)
        if (inMst[e]) ++mstEdges, mstWeight += ew[e];

    // CPU reference: Kruskal with the same (weight, index) order.
    std::vector<int> order(E), uf(V);
    std::iota(order.begin(), order.end(), 0);
    std::iota(uf.begin(), uf.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return ew[a] < ew[b] || (ew[a] == ew[b] && a < b); });
    long long refWeight = 0;
    int refEdges = 0, sameEdges = 0;
    for (int e : order) {
        const int a = findRoot(uf, eu[e]), b = findRoot(uf, ev[e]);
        if (a == b) continue;
        uf[a] = b;
        refWeight += ew[e];
        ++refEdges;
        sameEdges += inMst[e];
    }
    printf("rounds=%d mst edges=%d weight=%lld\n", rounds, mstEdges, mstWeight);
    printf("kruskal edges=%d weight=%lld shared edges=%d\n", refEdges, refWeight, sameEdges);
    const bool ok = components == 1 && mstEdges == V - 1 && mstWeight == refWeight && sameEdges == refEdges;
    printf("check: %s\n", ok ? "PASS" : "FAIL");
    CUDA_CHECK(cudaFree(dEu)); CUDA_CHECK(cudaFree(dEv)); CUDA_CHECK(cudaFree(dEw)); CUDA_CHECK(cudaFree(dComp));
    CUDA_CHECK(cudaFree(dParent)); CUDA_CHECK(cudaFree(dFlags)); CUDA_CHECK(cudaFree(dMin)); CUDA_CHECK(cudaFree(dInMst));
    return ok ? 0 : 1;
}
