// C = A * B for square n x n row-major matrices with TILE x TILE shared
// memory tiles; the inner product over a tile is unrolled UNROLL ways.
// Adapted from the cuda-synth corpus program basic_03_matmul_tiled_128.
#ifndef TILE
#define TILE 16
#endif
#ifndef UNROLL
#define UNROLL TILE
#endif

constexpr int kUnroll = UNROLL;

__global__ void __launch_bounds__(TILE * TILE) matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                                            float* __restrict__ C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        const int aCol = t * TILE + threadIdx.x;
        const int bRow = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < n && aCol < n ? A[row * n + aCol] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = bRow < n && col < n ? B[bRow * n + col] : 0.0f;
        __syncthreads();
#pragma unroll kUnroll
        for (int k = 0; k < TILE; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}
