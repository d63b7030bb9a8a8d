__global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n)
{
    __shared__ float sA[16 * 16];
    __shared__ float sB[16 * 16];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const int row = (int)(blockIdx.y * 16 + ty);
    const int col = (int)(blockIdx.x * 16 + tx);
    float acc = 0.0f;
    const int tiles = (n + 15) >> 4;
    for (int t = 0; t < tiles; t++) {
        const int a = (t << 4) + (int)tx;
        const int b = (t << 4) + (int)ty;
        sA[ty * 16 + tx] = (row < n && a < n) ? A[row * n + a] : 0.0f;
        sB[ty * 16 + tx] = (b < n && col < n) ? B[b * n + col] : 0.0f;
        __syncthreads();
#pragma unroll 4
        for (int k = 0; k < 16; k++)
            acc = fmaf(sA[ty * 16 + k], sB[k * 16 + tx], acc);
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}
