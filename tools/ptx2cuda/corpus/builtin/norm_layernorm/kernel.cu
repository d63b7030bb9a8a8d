// Layer normalisation of each row of a rows x cols matrix, one warp per
// row: mean, then variance around it (two passes, warp shuffles), then
// y = (x - mean) / sqrt(var + eps) * gamma + beta.
#ifndef WARPS
#define WARPS 4
#endif

__device__ __forceinline__ float warp_allsum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void __launch_bounds__(WARPS * 32) layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
                                                        const float* __restrict__ beta, float* __restrict__ y,
                                                        int rows, int cols, float eps)
{
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows)
        return;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32)
        s += xr[c];
    const float mean = warp_allsum(s) / cols;
    float q = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float d = xr[c] - mean;
        q += d * d;
    }
    const float rstd = rsqrtf(warp_allsum(q) / cols + eps);
    for (int c = lane; c < cols; c += 32)
        yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}
