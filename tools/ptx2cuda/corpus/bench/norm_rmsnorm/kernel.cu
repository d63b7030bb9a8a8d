// RMS normalisation of each row, one block per row:
// y = x / sqrt(mean(x^2) + eps) * weight, the sum of squares reduced with
// warp shuffles and the warps' sums through shared memory.
#ifndef BLOCK
#define BLOCK 256
#endif

#define WARPS (BLOCK / 32)

__global__ void __launch_bounds__(BLOCK) rmsnorm(const float* __restrict__ x, const float* __restrict__ weight,
                                                 float* __restrict__ y, int cols, float eps)
{
    __shared__ float red[WARPS];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        const float v = xr[c];
        ss += v * v;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        ss += __shfl_xor_sync(0xffffffffu, ss, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = ss;
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w)
        total += red[w];
    const float scale = rsqrtf(total / cols + eps);
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        yr[c] = xr[c] * scale * weight[c];
}
