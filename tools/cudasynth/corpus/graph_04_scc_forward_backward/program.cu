// Strongly connected components of a directed graph with 1024 nodes,
// optimized for low synchronization cost with the coloring (forward max
// propagation + backward reachability) algorithm:
//   1. every unassigned vertex starts with its own id as color; colors are
//      pushed forward along edges with atomicMax until nothing changes;
//   2. a vertex whose color equals its id is the root of an SCC; the SCC is
//      everything of that color that reaches the root backwards.
// Rounds repeat until every vertex is assigned. Edge-parallel kernels use a
// grid-stride loop; convergence is signalled through a device flag.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <map>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t err_ = (call);                                            \
        if (err_ != cudaSuccess) {                                            \
            fprintf(stderr, "CUDA error %s (%s:%d)\n",                        \
                    cudaGetErrorString(err_), __FILE__, __LINE__);            \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

constexpr int NV = 1024;
constexpr int UNASSIGNED = -1;

__global__ void initColors(int* color, const int* scc, int n) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += blockDim.x * gridDim.x)
        color[v] = (scc[v] == UNASSIGNED) ? v : -1;
}

__global__ void forwardMax(const int* src, const int* dst, int m, int* color, const int* scc, int* changed) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < m; e += blockDim.x * gridDim.x) {
        const int u = src[e], v = dst[e];
        if (scc[u] != UNASSIGNED || scc[v] != UNASSIGNED) continue;
        const int cu = color[u];
        if (cu > color[v]) {
            atomicMax(&color[v], cu);
            *changed = 1;
        }
    }
}

__global__ void markRoots(int* scc, const int* color, int n) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += blockDim.x * gridDim.x)
        if (scc[v] == UNASSIGNED && color[v] == v) scc[v] = v;
}

__global__ void backwardReach(const int* src, const int* dst, int m, const int* color, int* scc, int* changed) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < m; e += blockDim.x * gridDim.x) {
        const int u = src[e], v = dst[e];
        // v already belongs to the SCC of its color; u has the same color and reaches v.
        if (scc[u] == UNASSIGNED && scc[v] != UNASSIGNED && scc[v] == color[v] && color[u] == color[v]) {
            scc[u] = color[v];
            *changed = 1;
        }
    }
}

// CPU Kosaraju for verification.
static void kosaraju(const std::vector<std::vector<int>>& g, std::vector<int>& comp) {
    const int n = (int)g.size();
    std::vector<std::vector<int>> rg(n);
    for (int u = 0; u < n; ++u)
        for (int v : g[u]) rg[v].push_back(u);
    std::vector<int> order, it(n, 0);
    std::vector<char> seen(n, 0);
    for (int s = 0; s < n; ++s) {
        if (seen[s]) continue;
        std::vector<int> st{s};
        seen[s] = 1;
        while (!st.empty()) {
            const int u = st.back();
            if (it[u] < (int)g[u].size()) {
                const int v = g[u][it[u]++];
                if (!seen[v]) {
                    seen[v] = 1;
                    st.push_back(v);
                }
            } else {
                order.push_back(u);
                st.pop_back();
            }
        }
    }
    comp.assign(n, -1);
    int c = 0;
    for (int k = n - 1; k >= 0; --k) {
        const int s = order[k];
        if (comp[s] != -1) continue;
        std::vector<int> st{s};
        comp[s] = c;
        while (!st.empty()) {
            const int u = st.back();
            st.pop_back();
            for (int v : rg[u])
                if (comp[v] == -1) {
                    comp[v] = c;
                    st.push_back(v);
                }
        }
        ++c;
    }
}

int main() {
    // Clusters of 1..12 vertices; each cluster is a cycle with a chord, and
    // clusters are chained by forward-only edges. Ids are permuted so that
    // clusters are scattered over the id range.
    std::vector<std::vector<int>> g(NV);
    auto perm = [](int i) { return (i * 389 + 77) % NV; };  // 389 is odd: bijection mod 1024
    int start = 0, cluster = 0;
    std::vector<int> clusterStart;
    while (start < NV) {
        int size = 1 + (cluster * 5) % 12;
        if (start + size > NV) size = NV - start;
        clusterStart.push_back(start);
        for (int k = 0; k < size && size > 1; ++k) g[perm(start + k)].push_back(perm(start + (k + 1) % size));
        if (size > 3) g[perm(start)].push_back(perm(start + size / 2));
        start += size;
        ++cluster;
    }
    clusterStart.push_back(NV);
    for (int c = 0; c + 1 < cluster; ++c) {
        const int from = perm(clusterStart[c]);
        const int to = perm(clusterStart[c + 1 + (c % 3 == 0 && c + 2 < cluster ? 1 : 0)]);
        g[from].push_back(to);
    }

    std::vector<int> hSrc, hDst;
    for (int u = 0; u < NV; ++u)
        for (int v : g[u]) {
            hSrc.push_back(u);
            hDst.push_back(v);
        }
    const int m = (int)hSrc.size();

    int *dSrc, *dDst, *dColor, *dScc, *dChanged;
    CUDA_CHECK(cudaMalloc(&dSrc, m * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDst, m * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dColor, NV * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dScc, NV * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dChanged, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dSrc, hSrc.data(), m * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dDst, hDst.data(), m * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dScc, 0xff, NV * sizeof(int)));

    const int threads = 256, blocks = 8;
    int rounds = 0;
    std::vector<int> scc(NV, UNASSIGNED);
    for (;;) {
        int remaining = 0;
        for (int v = 0; v < NV; ++v) remaining += scc[v] == UNASSIGNED;
        if (remaining == 0 || rounds > NV) break;
        ++rounds;
        initColors<<<blocks, threads>>>(dColor, dScc, NV);
        CUDA_CHECK(cudaGetLastError());
        int changed = 1;
        while (changed) {
            CUDA_CHECK(cudaMemset(dChanged, 0, sizeof(int)));
            forwardMax<<<blocks, threads>>>(dSrc, dDst, m, dColor, dScc, dChanged);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
        }
        markRoots<<<blocks, threads>>>(dScc, dColor, NV);
        CUDA_CHECK(cudaGetLastError());
        changed = 1;
        while (changed) {
            CUDA_CHECK(cudaMemset(dChanged, 0, sizeof(int)));
            backwardReach<<<blocks, threads>>>(dSrc, dDst, m, dColor, dScc, dChanged);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
        }
        CUDA_CHECK(cudaMemcpy(scc.data(), dScc, NV * sizeof(int), cudaMemcpyDeviceToHost));
    }

    std::vector<int> comp;
    kosaraju(g, comp);
    std::map<int, int> gpuToCpu, cpuToGpu, sizes;
    bool ok = true;
    for (int v = 0; v < NV; ++v) {
        if (scc[v] == UNASSIGNED) {
            ok = false;
            continue;
        }
        sizes[scc[v]]++;
        if (!gpuToCpu.count(scc[v])) gpuToCpu[scc[v]] = comp[v];
        if (!cpuToGpu.count(comp[v])) cpuToGpu[comp[v]] = scc[v];
        if (gpuToCpu[scc[v]] != comp[v] || cpuToGpu[comp[v]] != scc[v]) ok = false;
    }
    int largest = 0, singletons = 0;
    for (auto& kv : sizes) {
        if (kv.second > largest) largest = kv.second;
        if (kv.second == 1) ++singletons;
    }

    printf("vertices=%d edges=%d\n", NV, m);
    printf("rounds=%d sccs=%d largest=%d singletons=%d\n", rounds, (int)sizes.size(), largest, singletons);
    printf("scc of vertex 0 has %d vertices\n", sizes[scc[0]]);
    printf("matches Kosaraju: %s\n", ok ? "PASS" : "FAIL");

    cudaFree(dSrc);
    cudaFree(dDst);
    cudaFree(dColor);
    cudaFree(dScc);
    cudaFree(dChanged);
    return ok ? 0 : 1;
}
