// Connected components of an undirected graph with 8192 nodes (edge list),
// optimized for warp-level programming: label propagation with atomicMin
// hooking followed by pointer jumping. Each warp counts its changed edges
// with __ballot_sync/__popc and issues one atomicAdd instead of 32.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <map>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e_ = (call);                                                \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error: %s (%s:%d)\n", cudaGetErrorString(e_), \
                    __FILE__, __LINE__);                                        \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define NUM_NODES 8192
#define NUM_EDGES 6000
#define FULL_MASK 0xffffffffu

__global__ void initLabels(int* label, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) label[v] = v;
}

__global__ void hookEdges(const int2* __restrict__ edges, int m, int* label, int* changedCount) {
    const int lane = threadIdx.x & 31;
    const int stride = blockDim.x * gridDim.x;
    // Loop bound rounded up to whole warps so every lane reaches __ballot_sync.
    const int mRounded = (m + 31) & ~31;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < mRounded; e += stride) {
        bool changed = false;
        if (e < m) {
            const int2 ed = edges[e];
            const int lu = label[ed.x], lv = label[ed.y];
            if (lu < lv) {
                changed = atomicMin(&label[lv], lu) > lu;
            } else if (lv < lu) {
                changed = atomicMin(&label[lu], lv) > lv;
            }
        }
        const unsigned int votes = __ballot_sync(FULL_MASK, changed);
        if (lane == 0 && votes != 0) atomicAdd(changedCount, __popc(votes));
    }
}

__global__ void pointerJump(int* label, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int l = label[v];
    while (label[l] != l) l = label[l];
    label[v] = l;
}

static int findRoot(std::vector<int>& parent, int x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

int main() {
    std::vector<int2> edges(NUM_EDGES);
    unsigned int state = 12345u;
    for (int e = 0; e < NUM_EDGES; ++e) {
        state = state * 1664525u + 1013904223u;
        const int u = (state >> 8) % NUM_NODES;
        state = state * 1664525u + 1013904223u;
        const int v = (state >> 8) % NUM_NODES;
        edges[e] = make_int2(u, v);
    }

    int2* dEdges;
    int *dLabel, *dChanged;
    CUDA_CHECK(cudaMalloc(&dEdges, NUM_EDGES * sizeof(int2)));
    CUDA_CHECK(cudaMalloc(&dLabel, NUM_NODES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dChanged, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dEdges, edges.data(), NUM_EDGES * sizeof(int2), cudaMemcpyHostToDevice));

    const int threads = 256;
    initLabels<<<(NUM_NODES + threads - 1) / threads, threads>>>(dLabel, NUM_NODES);
    CUDA_CHECK(cudaGetLastError());

    int changed = 1, iterations = 0;
    while (changed > 0 && iterations < 100) {
        CUDA_CHECK(cudaMemset(dChanged, 0, sizeof(int)));
        hookEdges<<<16, threads>>>(dEdges, NUM_EDGES, dLabel, dChanged);
        CUDA_CHECK(cudaGetLastError());
        pointerJump<<<(NUM_NODES + threads - 1) / threads, threads>>>(dLabel, NUM_NODES);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
        ++iterations;
    }
    fprintf(stderr, "converged after %d iterations\n", iterations);

    std::vector<int> label(NUM_NODES);
    CUDA_CHECK(cudaMemcpy(label.data(), dLabel, NUM_NODES * sizeof(int), cudaMemcpyDeviceToHost));

    // CPU union-find reference; the GPU label of a component is its smallest vertex.
    std::vector<int> parent(NUM_NODES);
    for (int i = 0; i < NUM_NODES; ++i) parent[i] = i;
    for (const int2& ed : edges) {
        int a = findRoot(parent, ed.x), b = findRoot(parent, ed.y);
        if (a != b) parent[a < b ? b : a] = a < b ? a : b;
    }
    int mismatches = 0;
    std::map<int, int> compSize;
    for (int v = 0; v < NUM_NODES; ++v) {
        if (findRoot(parent, v) != label[v]) ++mismatches;
        compSize[label[v]]++;
    }
    int largest = 0, isolated = 0;
    for (auto& kv : compSize) {
        if (kv.second > largest) largest = kv.second;
        if (kv.second == 1) ++isolated;
    }

    printf("nodes=%d edges=%d\n", NUM_NODES, NUM_EDGES);
    printf("components=%d largest=%d isolated=%d\n", (int)compSize.size(), largest, isolated);
    printf("label[0]=%d label[4096]=%d label[8191]=%d\n", label[0], label[4096], label[8191]);
    printf("check vs union-find: %s\n", mismatches == 0 ? "PASS" : "FAIL");

    cudaFree(dEdges);
    cudaFree(dLabel);
    cudaFree(dChanged);
    return mismatches == 0 ? 0 : 1;
}
