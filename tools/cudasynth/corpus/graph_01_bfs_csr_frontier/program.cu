// Breadth-first traversal of a directed graph with 4096 nodes stored in CSR
// format, optimized for work efficiency: a queue-based, level-synchronous
// BFS. Only vertices in the current frontier are expanded; a neighbour is
// claimed exactly once with atomicCAS on its level and appended to the next
// frontier through an atomicAdd on a counter in managed memory.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <queue>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err = (call);                                              \
        if (err != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error at %s:%d: %s\n", __FILE__, __LINE__,   \
                    cudaGetErrorString(err));                                  \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

constexpr int NUM_NODES = 4096;
constexpr int UNVISITED = -1;

__global__ void bfsExpand(const int* __restrict__ rowPtr, const int* __restrict__ colIdx,
                          const int* __restrict__ frontier, int frontierSize,
                          int* __restrict__ nextFrontier, int* nextSize,
                          int* __restrict__ level, int depth) {
    for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < frontierSize; f += blockDim.x * gridDim.x) {
        const int u = frontier[f];
        for (int e = rowPtr[u]; e < rowPtr[u + 1]; ++e) {
            const int v = colIdx[e];
            if (atomicCAS(&level[v], UNVISITED, depth + 1) == UNVISITED) {
                const int slot = atomicAdd(nextSize, 1);
                nextFrontier[slot] = v;
            }
        }
    }
}

int main() {
    // Build the graph: binary-tree edges plus a few pseudo-random shortcuts.
    std::vector<std::vector<int>> adj(NUM_NODES);
    for (int i = 0; i < NUM_NODES; ++i) {
        if (2 * i + 1 < NUM_NODES) adj[i].push_back(2 * i + 1);
        if (2 * i + 2 < NUM_NODES) adj[i].push_back(2 * i + 2);
        if (i % 3 == 0) adj[i].push_back((i * 37 + 11) % NUM_NODES);
        if (i % 5 == 0) adj[i].push_back((i * 101 + 3) % NUM_NODES);
    }
    std::vector<int> rowPtr(NUM_NODES + 1, 0), colIdx;
    for (int i = 0; i < NUM_NODES; ++i) {
        rowPtr[i + 1] = rowPtr[i] + (int)adj[i].size();
        colIdx.insert(colIdx.end(), adj[i].begin(), adj[i].end());
    }
    const int numEdges = (int)colIdx.size();

    int *dRowPtr, *dColIdx, *dLevel, *dFrontA, *dFrontB;
    int* nextSize;  // managed: written by the GPU, read by the host after each level
    CUDA_CHECK(cudaMalloc(&dRowPtr, (NUM_NODES + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dColIdx, numEdges * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dLevel, NUM_NODES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFrontA, NUM_NODES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFrontB, NUM_NODES * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&nextSize, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dRowPtr, rowPtr.data(), (NUM_NODES + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dColIdx, colIdx.data(), numEdges * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dLevel, 0xff, NUM_NODES * sizeof(int)));  // all -1

    const int source = 0, zero = 0;
    CUDA_CHECK(cudaMemcpy(dLevel + source, &zero, sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dFrontA, &source, sizeof(int), cudaMemcpyHostToDevice));

    int frontierSize = 1, depth = 0;
    std::vector<int> levelSizes(1, 1);
    while (frontierSize > 0) {
        *nextSize = 0;
        const int threads = 128;
        const int blocks = (frontierSize + threads - 1) / threads;
        bfsExpand<<<blocks, threads>>>(dRowPtr, dColIdx, dFrontA, frontierSize, dFrontB, nextSize, dLevel, depth);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        frontierSize = *nextSize;
        if (frontierSize > 0) levelSizes.push_back(frontierSize);
        int* tmp = dFrontA;
        dFrontA = dFrontB;
        dFrontB = tmp;
        ++depth;
    }

    std::vector<int> level(NUM_NODES);
    CUDA_CHECK(cudaMemcpy(level.data(), dLevel, NUM_NODES * sizeof(int), cudaMemcpyDeviceToHost));

    // CPU BFS reference.
    std::vector<int> ref(NUM_NODES, UNVISITED);
    std::queue<int> q;
    ref[source] = 0;
    q.push(source);
    while (!q.empty()) {
        const int u = q.front();
        q.pop();
        for (int v : adj[u])
            if (ref[v] == UNVISITED) {
                ref[v] = ref[u] + 1;
                q.push(v);
            }
    }
    int mismatches = 0, reached = 0;
    long long levelSum = 0;
    for (int i = 0; i < NUM_NODES; ++i) {
        if (level[i] != ref[i]) ++mismatches;
        if (level[i] != UNVISITED) {
            ++reached;
            levelSum += level[i];
        }
    }

    printf("nodes=%d edges=%d\n", NUM_NODES, numEdges);
    printf("levels=%d reached=%d level_sum=%lld\n", (int)levelSizes.size(), reached, levelSum);
    printf("frontier sizes:");
    for (size_t d = 0; d < levelSizes.size(); ++d) printf(" %d", levelSizes[d]);
    printf("\n");
    printf("level[4095]=%d level[1234]=%d\n", level[4095], level[1234]);
    printf("check vs CPU BFS: %s\n", mismatches == 0 ? "PASS" : "FAIL");

    cudaFree(dRowPtr);
    cudaFree(dColIdx);
    cudaFree(dLevel);
    cudaFree(dFrontA);
    cudaFree(dFrontB);
    cudaFree(nextSize);
    return mismatches == 0 ? 0 : 1;
}
