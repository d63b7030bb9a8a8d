// Single-source shortest paths from four sources at once with edge-parallel
// Bellman-Ford on a directed graph of 4096 vertices and 24576 weighted edges
// (edge list, structure of arrays). blockIdx.y selects the source and its
// distance row; a grid-stride loop relaxes the edges with atomicMin, and a
// flag in managed memory tells the host whether another pass is needed. The
// final distances do not depend on the order of relaxations; the pass count
// does, so it goes to stderr. The host checks every distance with Dijkstra.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <queue>
#include <climits>
#include <functional>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e = (call);                                               \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(e), __FILE__, __LINE__);               \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

const int V = 4096;
const int OUT_DEGREE = 6;
const int E = V * OUT_DEGREE;
const int NUM_SOURCES = 4;
const int INF = INT_MAX;

__global__ void relaxEdges(const int* __restrict__ src, const int* __restrict__ dst, const int* __restrict__ w,
                           int numEdges, int* dist, int numVertices, int* changed) {
    int* d = dist + (size_t)blockIdx.y * numVertices;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < numEdges; e += blockDim.x * gridDim.x) {
        const int du = d[src[e]];
        if (du == INF) continue;
        const int cand = du + w[e];
        if (cand < d[dst[e]]) {
            const int old = atomicMin(&d[dst[e]], cand);
            if (cand < old) *changed = 1;
        }
    }
}

int main() {
    std::vector<int> src(E), dst(E), w(E);
    unsigned s = 0x2545F491u;
    auto next = [&s]() {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        return s;
    };
    for (int e = 0; e < E; ++e) {
        src[e] = e / OUT_DEGREE;
        int d = (int)(next() % V);
        if (d % 97 == 0) d = (d + 1) % V;  // vertices 0, 97, 194, ... get no in-edges
        if (d == src[e]) d = (d + 2) % V;
        dst[e] = d;
        w[e] = 1 + (int)(next() % 100);
    }
    const int sources[NUM_SOURCES] = {0, 1234, 2500, 4000};
    std::vector<int> dist((size_t)NUM_SOURCES * V, INF);
    for (int k = 0; k < NUM_SOURCES; ++k) dist[(size_t)k * V + sources[k]] = 0;

    int *dSrc, *dDst, *dW, *dDist, *changed;
    CUDA_CHECK(cudaMalloc(&dSrc, E * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDst, E * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dW, E * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDist, dist.size() * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&changed, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dSrc, src.data(), E * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dDst, dst.data(), E * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dW, w.data(), E * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dDist, dist.data(), dist.size() * sizeof(int), cudaMemcpyHostToDevice));

    const dim3 grid(24, NUM_SOURCES), block(256);
    int passes = 0;
    do {
        *changed = 0;
        relaxEdges<<<grid, block>>>(dSrc, dDst, dW, E, dDist, V, changed);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        ++passes;
    } while (*changed && passes < V);
    fprintf(stderr, "Bellman-Ford passes: %d\n", passes);
    CUDA_CHECK(cudaMemcpy(dist.data(), dDist, dist.size() * sizeof(int), cudaMemcpyDeviceToHost));

    // CPU reference: Dijkstra from each source over an adjacency list.
    std::vector<std::vector<std::pair<int, int>>> adj(V);
    for (int e = 0; e < E; ++e) adj[src[e]].push_back({dst[e], w[e]});
    int wrong = 0;
    printf("vertices=%d edges=%d sources=%d\n", V, E, NUM_SOURCES);
    for (int k = 0; k < NUM_SOURCES; ++k) {
        std::vector<int> ref(V, INF);
        std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<std::pair<int, int>>> pq;
        ref[sources[k]] = 0;
        pq.push({0, sources[k]});
        while (!pq.empty()) {
            const std::pair<int, int> top = pq.top();
            pq.pop();
            if (top.first > ref[top.second]) continue;
            for (const std::pair<int, int>& nb : adj[top.second])
                if (top.first + nb.second < ref[nb.first]) {
                    ref[nb.first] = top.first + nb.second;
                    pq.push({ref[nb.first], nb.first});
                }
        }
        int reachable = 0, farthest = 0, farVertex = -1;
        long long total = 0;
        for (int v = 0; v < V; ++v) {
            const int d = dist[(size_t)k * V + v];
            if (d != ref[v]) ++wrong;
            if (d == INF) continue;
            ++reachable;
            total += d;
            if (d > farthest) farthest = d, farVertex = v;
        }
        printf("source %4d: reachable=%d sum=%lld eccentricity=%d (vertex %d) d(->2048)=%d\n", sources[k], reachable,
               total, farthest, farVertex, dist[(size_t)k * V + 2048]);
    }
    printf("distances differing from Dijkstra=%d\n", wrong);
    CUDA_CHECK(cudaFree(dSrc)); CUDA_CHECK(cudaFree(dDst)); CUDA_CHECK(cudaFree(dW)); CUDA_CHECK(cudaFree(dDist));
    CUDA_CHECK(cudaFree(changed));
    return wrong == 0 ? 0 : 1;
}
