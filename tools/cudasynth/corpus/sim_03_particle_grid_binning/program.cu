// Neighbour search for 4096 particles in a 3D space using a uniform grid
// (spatial binning), focused on avoiding O(n^2) work:
//   1. count particles per cell with atomicAdd;
//   2. exclusive prefix sum over the 4096 cell counts in one block
//      (work-efficient Blelloch scan in dynamic shared memory);
//   3. scatter particle indices into their cells (atomicAdd cursors);
//   4. each particle scans only the 27 surrounding cells for neighbours
//      within the interaction radius (= cell size).
// Coordinates are multiples of 1/1024, so distance tests are exact.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error '%s' (%s:%d)\n", cudaGetErrorString(err_), \
                    __FILE__, __LINE__);                                        \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define NUM_PARTICLES 4096
#define CELLS_PER_DIM 16
#define NUM_CELLS (CELLS_PER_DIM * CELLS_PER_DIM * CELLS_PER_DIM)
#define CELL_SIZE (1.0f / CELLS_PER_DIM)
#define SCAN_THREADS 1024

__device__ __forceinline__ int cellCoord(float x) {
    int c = (int)(x * CELLS_PER_DIM);
    return c < 0 ? 0 : (c >= CELLS_PER_DIM ? CELLS_PER_DIM - 1 : c);
}

__device__ __forceinline__ int cellIndex(int cx, int cy, int cz) {
    return (cz * CELLS_PER_DIM + cy) * CELLS_PER_DIM + cx;
}

__global__ void countCells(const float3* pos, int* cellOf, int* cellCount, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const float3 p = pos[i];
        const int c = cellIndex(cellCoord(p.x), cellCoord(p.y), cellCoord(p.z));
        cellOf[i] = c;
        atomicAdd(&cellCount[c], 1);
    }
}

// Exclusive scan of `count` (= 4 * blockDim.x) values by a single block.
__global__ void exclusiveScan(const int* in, int* out, int count) {
    extern __shared__ int temp[];
    const int t = threadIdx.x;
    for (int i = t; i < count; i += blockDim.x) temp[i] = in[i];
    __syncthreads();

    int offset = 1;
    for (int d = count >> 1; d > 0; d >>= 1) {  // up-sweep
        for (int k = t; k < d; k += blockDim.x) {
            const int ai = offset * (2 * k + 1) - 1, bi = offset * (2 * k + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset <<= 1;
        __syncthreads();
    }
    if (t == 0) temp[count - 1] = 0;
    __syncthreads();
    for (int d = 1; d < count; d <<= 1) {  // down-sweep
        offset >>= 1;
        for (int k = t; k < d; k += blockDim.x) {
            const int ai = offset * (2 * k + 1) - 1, bi = offset * (2 * k + 2) - 1;
            const int v = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += v;
        }
        __syncthreads();
    }
    for (int i = t; i < count; i += blockDim.x) out[i] = temp[i];
}

__global__ void scatterToCells(const int* cellOf, const int* cellStart, int* cursor, int* sorted, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const int c = cellOf[i];
        sorted[cellStart[c] + atomicAdd(&cursor[c], 1)] = i;
    }
}

__global__ void countNeighbours(const float3* pos, const int* cellStart, const int* cellCount, const int* sorted,
                                int* neighbours, int n, float radius2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float3 p = pos[i];
    const int cx = cellCoord(p.x), cy = cellCoord(p.y), cz = cellCoord(p.z);
    int found = 0;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int x = cx + dx, y = cy + dy, z = cz + dz;
                if (x < 0 || y < 0 || z < 0 || x >= CELLS_PER_DIM || y >= CELLS_PER_DIM || z >= CELLS_PER_DIM) continue;
                const int c = cellIndex(x, y, z);
                for (int k = cellStart[c]; k < cellStart[c] + cellCount[c]; ++k) {
                    const int j = sorted[k];
                    if (j == i) continue;
                    const float3 q = pos[j];
                    const float ddx = q.x - p.x, ddy = q.y - p.y, ddz = q.z - p.z;
                    if (ddx * ddx + ddy * ddy + ddz * ddz <= radius2) ++found;
                }
            }
    neighbours[i] = found;
}

int main() {
    std::vector<float3> pos(NUM_PARTICLES);
    unsigned int s = 424242u;
    for (int i = 0; i < NUM_PARTICLES; ++i) {
        float c[3];
        for (int d = 0; d < 3; ++d) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            c[d] = (float)(s % 1024) / 1024.0f;
        }
        // Denser particles in one corner region.
        if (i % 4 == 0) {
            c[0] *= 0.25f;
            c[1] *= 0.25f;
        }
        pos[i] = make_float3(c[0], c[1], c[2]);
    }

    float3* dPos;
    int *dCellOf, *dCount, *dStart, *dCursor, *dSorted, *dNeigh;
    CUDA_CHECK(cudaMalloc(&dPos, NUM_PARTICLES * sizeof(float3)));
    CUDA_CHECK(cudaMalloc(&dCellOf, NUM_PARTICLES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCount, NUM_CELLS * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dStart, NUM_CELLS * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCursor, NUM_CELLS * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dSorted, NUM_PARTICLES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dNeigh, NUM_PARTICLES * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dPos, pos.data(), NUM_PARTICLES * sizeof(float3), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dCount, 0, NUM_CELLS * sizeof(int)));
    CUDA_CHECK(cudaMemset(dCursor, 0, NUM_CELLS * sizeof(int)));

    countCells<<<16, 256>>>(dPos, dCellOf, dCount, NUM_PARTICLES);
    exclusiveScan<<<1, SCAN_THREADS, NUM_CELLS * sizeof(int)>>>(dCount, dStart, NUM_CELLS);
    scatterToCells<<<16, 256>>>(dCellOf, dStart, dCursor, dSorted, NUM_PARTICLES);
    const float radius = CELL_SIZE;
    countNeighbours<<<(NUM_PARTICLES + 127) / 128, 128>>>(dPos, dStart, dCount, dSorted, dNeigh, NUM_PARTICLES,
                                                          radius * radius);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<int> neigh(NUM_PARTICLES), count(NUM_CELLS), start(NUM_CELLS);
    CUDA_CHECK(cudaMemcpy(neigh.data(), dNeigh, NUM_PARTICLES * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(count.data(), dCount, NUM_CELLS * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(start.data(), dStart, NUM_CELLS * sizeof(int), cudaMemcpyDeviceToHost));

    // Brute-force O(n^2) reference for the neighbour counts; scan check.
    int mismatches = 0, maxNeigh = 0, maxCell = 0, run = 0;
    long long pairs = 0;
    for (int c = 0; c < NUM_CELLS; ++c) {
        if (start[c] != run) ++mismatches;
        run += count[c];
        if (count[c] > maxCell) maxCell = count[c];
    }
    const float r2 = radius * radius;
    for (int i = 0; i < NUM_PARTICLES; ++i) {
        int ref = 0;
        for (int j = 0; j < NUM_PARTICLES; ++j) {
            if (j == i) continue;
            const float dx = pos[j].x - pos[i].x, dy = pos[j].y - pos[i].y, dz = pos[j].z - pos[i].z;
            if (dx * dx + dy * dy + dz * dz <= r2) ++ref;
        }
        if (ref != neigh[i]) ++mismatches;
        pairs += neigh[i];
        if (neigh[i] > maxNeigh) maxNeigh = neigh[i];
    }

    printf("particles=%d cells=%d radius=%.4f\n", NUM_PARTICLES, NUM_CELLS, radius);
    printf("max particles per cell=%d\n", maxCell);
    printf("neighbour pairs=%lld max neighbours=%d neighbours[0]=%d neighbours[4095]=%d\n", pairs / 2, maxNeigh,
           neigh[0], neigh[NUM_PARTICLES - 1]);
    printf("matches brute force: %s\n", mismatches == 0 ? "yes" : "no");

    cudaFree(dPos); cudaFree(dCellOf); cudaFree(dCount); cudaFree(dStart);
    cudaFree(dCursor); cudaFree(dSorted); cudaFree(dNeigh);
    return mismatches == 0 ? 0 : 1;
}
