// All-pairs shortest paths with the three-phase blocked Floyd-Warshall
// algorithm on a directed graph of 256 vertices (dense distance matrix of
// ints, 16x16 tiles). For every diagonal tile k: phase 1 closes the diagonal
// tile in shared memory, phase 2 updates the tiles in row k and column k
// (blockIdx.y picks which), phase 3 updates all the others from one row
// tile and one column tile staged in shared memory (2D grid). The host runs
// the classic triple loop and compares every entry.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t e = (call);                                                           \
        if (e != cudaSuccess) {                                                           \
            fprintf(stderr, "CUDA failure %s:%d: '%s'\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            exit(EXIT_FAILURE);                                                           \
        }                                                                                 \
    } while (0)

const int V = 256;
const int T = 16;            // tile edge
const int NT = V / T;
const int INF = 1 << 29;     // INF + INF still fits in an int

__device__ __forceinline__ int relax(int current, int viaA, int viaB) {
    const int through = viaA + viaB;
    return through < current ? through : current;
}

__global__ void phaseDiagonal(int* d, int k) {
    __shared__ int tile[T][T];
    const int i = threadIdx.y, j = threadIdx.x;
    const int gi = k * T + i, gj = k * T + j;
    tile[i][j] = d[gi * V + gj];
    __syncthreads();
    for (int m = 0; m < T; ++m) {
        const int v = relax(tile[i][j], tile[i][m], tile[m][j]);
        __syncthreads();
        tile[i][j] = v;
        __syncthreads();
    }
    d[gi * V + gj] = tile[i][j];
}

__global__ void phaseRowColumn(int* d, int k) {
    if (blockIdx.x == k) return;
    __shared__ int diag[T][T], own[T][T];
    const int i = threadIdx.y, j = threadIdx.x;
    const bool rowTile = blockIdx.y == 0;  // tile (k, x) or tile (x, k)
    const int gi = (rowTile ? k : blockIdx.x) * T + i, gj = (rowTile ? blockIdx.x : k) * T + j;
    diag[i][j] = d[(k * T + i) * V + k * T + j];
    own[i][j] = d[gi * V + gj];
    __syncthreads();
    for (int m = 0; m < T; ++m) {
        const int v = rowTile ? relax(own[i][j], diag[i][m], own[m][j]) : relax(own[i][j], own[i][m], diag[m][j]);
        __syncthreads();
        own[i][j] = v;
        __syncthreads();
    }
    d[gi * V + gj] = own[i][j];
}

__global__ void phaseRemaining(int* d, int k) {
    if (blockIdx.x == k || blockIdx.y == k) return;
    __shared__ int rowK[T][T], colK[T][T];
    const int i = threadIdx.y, j = threadIdx.x;
    const int gi = blockIdx.y * T + i, gj = blockIdx.x * T + j;
    rowK[i][j] = d[(k * T + i) * V + gj];
    colK[i][j] = d[gi * V + k * T + j];
    __syncthreads();
    int best = d[gi * V + gj];
    for (int m = 0; m < T; ++m) best = relax(best, colK[i][m], rowK[m][j]);
    d[gi * V + gj] = best;
}

int main() {
    std::vector<int> dist(V * V, INF);
    unsigned s = 20240607u;
    for (int i = 0; i < V; ++i)
        for (int j = 0; j < V; ++j) {
            s = s * 1664525u + 1013904223u;
            if (i == j) dist[i * V + j] = 0;
            else if (j < V - 6 && (s >> 24) < 20) dist[i * V + j] = 1 + (int)((s >> 8) % 50);  // p ~ 0.08
        }
    int* dDist;
    CUDA_CHECK(cudaMalloc(&dDist, V * V * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dDist, dist.data(), V * V * sizeof(int), cudaMemcpyHostToDevice));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    const dim3 tile(T, T);
    for (int k = 0; k < NT; ++k) {
        phaseDiagonal<<<1, tile>>>(dDist, k);
        phaseRowColumn<<<dim3(NT, 2), tile>>>(dDist, k);
        phaseRemaining<<<dim3(NT, NT), tile>>>(dDist, k);
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    fprintf(stderr, "blocked Floyd-Warshall: %.3f ms\n", ms);
    std::vector<int> gpu(V * V);
    CUDA_CHECK(cudaMemcpy(gpu.data(), dDist, V * V * sizeof(int), cudaMemcpyDeviceToHost));

    for (int m = 0; m < V; ++m)  // CPU reference
        for (int i = 0; i < V; ++i)
            for (int j = 0; j < V; ++j)
                if (dist[i * V + m] + dist[m * V + j] < dist[i * V + j]) dist[i * V + j] = dist[i * V + m] + dist[m * V + j];

    long long sum = 0;
    int unreachable = 0, diameter = 0, di = 0, dj = 0, mismatches = 0;
    for (int i = 0; i < V; ++i)
        for (int j = 0; j < V; ++j) {
            const int d = gpu[i * V + j];
            if (d != dist[i * V + j]) ++mismatches;
            if (d >= INF) {
                ++unreachable;
                continue;
            }
            sum += d;
            if (d > diameter) diameter = d, di = i, dj = j;
        }
    printf("vertices=%d tiles=%dx%d\n", V, NT, NT);
    printf("finite distance sum=%lld unreachable pairs=%d\n", sum, unreachable);
    printf("diameter=%d (%d -> %d) d(0,255)=%d d(17,200)=%d d(255,0)=%d\n", diameter, di, dj, gpu[255],
           gpu[17 * V + 200], gpu[255 * V]);
    printf("mismatches vs CPU=%d\n", mismatches);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(dDist));
    return mismatches == 0 ? 0 : 1;
}
