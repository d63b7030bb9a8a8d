// Graph coloring of an undirected graph with 2048 nodes (Jones-Plassmann),
// focused on avoiding races without locks. Every round has two phases:
// (1) each uncolored vertex checks whether its random priority beats all of
// its uncolored neighbours; (2) those local maxima (an independent set) pick
// the smallest color not used by any neighbour. Rounds repeat until an
// atomic counter of uncolored vertices reaches zero.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e = (call);                                                 \
        if (e != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error: %s at %s:%d\n", cudaGetErrorString(e), \
                    __FILE__, __LINE__);                                        \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define N_NODES 2048
#define NO_COLOR (-1)

__host__ __device__ inline unsigned int hashPriority(unsigned int v) {
    v ^= v >> 16;
    v *= 0x7feb352dU;
    v ^= v >> 15;
    v *= 0x846ca68bU;
    v ^= v >> 16;
    return v;
}

// true if u beats v: higher hash, ties broken by the larger id
__device__ inline bool beats(int u, int v) {
    const unsigned int pu = hashPriority(u), pv = hashPriority(v);
    return pu > pv || (pu == pv && u > v);
}

__global__ void findLocalMaxima(const int* rowPtr, const int* cols, const int* color, int* isMax, int n) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int result = 0;
    if (color[v] == NO_COLOR) {
        result = 1;
        for (int e = rowPtr[v]; e < rowPtr[v + 1]; ++e) {
            const int u = cols[e];
            if (color[u] == NO_COLOR && beats(u, v)) {
                result = 0;
                break;
            }
        }
    }
    isMax[v] = result;
}

__global__ void colorLocalMaxima(const int* rowPtr, const int* cols, int* color, const int* isMax,
                                 int* uncolored, int n) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    if (isMax[v]) {
        unsigned long long used = 0ULL;  // degree < 64 in this graph
        for (int e = rowPtr[v]; e < rowPtr[v + 1]; ++e) {
            const int c = color[cols[e]];
            if (c >= 0 && c < 64) used |= 1ULL << c;
        }
        int c = 0;
        while (used & (1ULL << c)) ++c;
        color[v] = c;
    } else if (color[v] == NO_COLOR) {
        atomicAdd(uncolored, 1);
    }
}

int main() {
    std::vector<std::set<int>> nbrs(N_NODES);
    auto addEdge = [&](int a, int b) {
        if (a == b) return;
        nbrs[a].insert(b);
        nbrs[b].insert(a);
    };
    for (int i = 0; i < N_NODES; ++i) {
        addEdge(i, (i + 1) % N_NODES);
        addEdge(i, (i * 7 + 3) % N_NODES);
        if (i % 4 == 0) addEdge(i, (int)(hashPriority(i) % N_NODES));
    }
    std::vector<int> rowPtr(N_NODES + 1, 0), cols;
    int maxDegree = 0;
    for (int i = 0; i < N_NODES; ++i) {
        rowPtr[i + 1] = rowPtr[i] + (int)nbrs[i].size();
        if ((int)nbrs[i].size() > maxDegree) maxDegree = (int)nbrs[i].size();
        for (int j : nbrs[i]) cols.push_back(j);
    }

    int *dRow, *dCols, *dColor, *dIsMax, *dUncolored;
    CUDA_CHECK(cudaMalloc(&dRow, rowPtr.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCols, cols.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dColor, N_NODES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dIsMax, N_NODES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dUncolored, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dRow, rowPtr.data(), rowPtr.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCols, cols.data(), cols.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dColor, 0xff, N_NODES * sizeof(int)));

    const int threads = 256, blocks = (N_NODES + threads - 1) / threads;
    int rounds = 0, remaining = N_NODES;
    while (remaining > 0 && rounds < 1000) {
        CUDA_CHECK(cudaMemset(dUncolored, 0, sizeof(int)));
        findLocalMaxima<<<blocks, threads>>>(dRow, dCols, dColor, dIsMax, N_NODES);
        CUDA_CHECK(cudaGetLastError());
        colorLocalMaxima<<<blocks, threads>>>(dRow, dCols, dColor, dIsMax, dUncolored, N_NODES);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(&remaining, dUncolored, sizeof(int), cudaMemcpyDeviceToHost));
        ++rounds;
    }

    std::vector<int> color(N_NODES);
    CUDA_CHECK(cudaMemcpy(color.data(), dColor, N_NODES * sizeof(int), cudaMemcpyDeviceToHost));

    int conflicts = 0, numColors = 0;
    std::vector<int> classSize(64, 0);
    for (int v = 0; v < N_NODES; ++v) {
        if (color[v] < 0) {
            ++conflicts;
            continue;
        }
        classSize[color[v]]++;
        if (color[v] + 1 > numColors) numColors = color[v] + 1;
        for (int u : nbrs[v])
            if (color[u] == color[v]) ++conflicts;
    }

    printf("nodes=%d undirected_edges=%d max_degree=%d\n", N_NODES, (int)cols.size() / 2, maxDegree);
    printf("rounds=%d colors_used=%d\n", rounds, numColors);
    printf("class sizes:");
    for (int c = 0; c < numColors; ++c) printf(" %d", classSize[c]);
    printf("\n");
    printf("color[0]=%d color[1000]=%d color[2047]=%d\n", color[0], color[1000], color[2047]);
    printf("valid coloring: %s\n", conflicts == 0 ? "yes" : "no");

    cudaFree(dRow);
    cudaFree(dCols);
    cudaFree(dColor);
    cudaFree(dIsMax);
    cudaFree(dUncolored);
    return conflicts == 0 ? 0 : 1;
}
