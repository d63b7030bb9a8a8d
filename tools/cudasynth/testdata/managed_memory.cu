// Unified memory: matrix transpose through a tiled kernel.
#include <cstdio>
#include <cuda_runtime.h>
#include <cstdlib>

#define CHECK(call)                                                            \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                \
                    cudaGetErrorString(err_));                                 \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define TILE 16

__global__ void transpose(const int *in, int *out, int rows, int cols) {
    __shared__ int tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

int main() {
    const int rows = 64, cols = 48;
    int *a, *b;
    CHECK(cudaMallocManaged(&a, rows * cols * sizeof(int)));
    CHECK(cudaMallocManaged(&b, rows * cols * sizeof(int)));
    for (int i = 0; i < rows * cols; i++) a[i] = i;
    dim3 block(TILE, TILE), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose<<<grid, block>>>(a, b, rows, cols);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int bad = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (b[c * rows + r] != a[r * cols + c]) bad++;
    printf("b[1] %d b[last] %d mismatches %d\n", b[1], b[rows * cols - 1], bad);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 0;
}
