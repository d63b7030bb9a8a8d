// HIP port of graph_01_bellman_ford_multisource/program.cu (cassbench reference translation).
//
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
#include <hip/hip_runtime.h>

#define HIP_CHECK(call)                                                      \
    do {                                                                     \
        hipError_t e = (call);                                               \
        if (e != hipSuccess) {                                               \
            fprintf(stderr, "HIP error %s at %s:%d\n",                       \
                    hipGetErrorString(e), __FILE__, __LINE__);               \
            exit(1);                                                         \
        }                                                                    \
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
    HIP_CHECK(hipMalloc(&dSrc, E * sizeof(int)));
    HIP_CHECK(hipMalloc(&dDst, E * sizeof(int)));
    HIP_CHECK(hipMalloc(&dW, E * sizeof(int)));
    HIP_CHECK(hipMalloc(&dDist, dist.size() * sizeof(int)));
    HIP_CHECK(hipMallocManaged(&changed, sizeof(int)));
    HIP_CHECK(hipMemcpy(dSrc, src.data(), E * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dDst, dst.data(), E * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dW, w.data(), E * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dDist, dist.data(), dist.size() * sizeof(int), hipMemcpyHostToDevice));

    const dim3 grid(24, NUM_SOURCES), block(256);
    int passes = 0;
    do {
        *changed = 0;
        relaxEdges<<<grid, block>>>(dSrc, dDst, dW, E, dDist, V, changed);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipDeviceSynchronize());
        ++passes;
    } while (*changed && passes < V);
    fprintf(stderr, "Bellman-Ford passes: %d\n", passes);
    HIP_CHECK(hipMemcpy(dist.data(), dDist, dist.size() * sizeof(int), hipMemcpyDeviceToHost));

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
    HIP_CHECK(hipFree(dSrc)); HIP_CHECK(hipFree(dDst)); HIP_CHECK(hipFree(dW)); HIP_CHECK(hipFree(dDist));
    HIP_CHECK(hipFree(changed));
    return wrong == 0 ? 0 : 1;
}
