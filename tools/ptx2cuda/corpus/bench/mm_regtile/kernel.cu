// C = A * B for square n x n row-major matrices with register tiling: a
// BT x BT block computes a (BT*TM) x (BT*TM) tile of C, each thread TM x TM
// outputs (rows ty + i*BT, columns tx + j*BT), over KT-wide slices of A
// and B staged in shared memory.
#ifndef BT
#define BT 16
#endif
#ifndef TM
#define TM 2
#endif
#ifndef KT
#define KT 16
#endif

#define TILE (BT * TM)

__global__ void __launch_bounds__(BT * BT) matmul_regtile(const float* __restrict__ A, const float* __restrict__ B,
                                                          float* __restrict__ C, int n)
{
    __shared__ float As[TILE][KT];
    __shared__ float Bs[KT][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BT + tx;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[TM][TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j)
            acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < n; k0 += KT) {
        for (int e = tid; e < TILE * KT; e += BT * BT) {
            const int r = e / KT, c = e % KT;
            As[r][c] = row0 + r < n && k0 + c < n ? A[(row0 + r) * n + k0 + c] : 0.0f;
        }
        for (int e = tid; e < KT * TILE; e += BT * BT) {
            const int r = e / TILE, c = e % TILE;
            Bs[r][c] = k0 + r < n && col0 + c < n ? B[(k0 + r) * n + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KT; ++k) {
            float a[TM], b[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = As[ty + i * BT][k];
#pragma unroll
            for (int j = 0; j < TM; ++j)
                b[j] = Bs[k][tx + j * BT];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TM; ++j)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TM; ++j) {
            const int r = row0 + ty + i * BT, c = col0 + tx + j * BT;
            if (r < n && c < n)
                C[r * n + c] = acc[i][j];
        }
}
