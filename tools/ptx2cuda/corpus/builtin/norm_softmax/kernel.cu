// Row-wise softmax of a rows x cols matrix, one block per row: the row
// maximum and the sum of exponentials are block reductions (warp shuffles,
// then the warps' results through shared memory).
// Adapted from the softmax of the cuda-synth corpus program
// ml_02_attention_softmax.
#ifndef BLOCK
#define BLOCK 256
#endif

#define WARPS (BLOCK / 32)

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void __launch_bounds__(BLOCK) softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    __shared__ float red[WARPS];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        m = fmaxf(m, xr[c]);
    m = warp_max(m);
    if (lane == 0)
        red[warp] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < WARPS; ++w)
        m = fmaxf(m, red[w]);
    __syncthreads();

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        s += expf(xr[c] - m);
    s = warp_sum(s);
    if (lane == 0)
        red[warp] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < WARPS; ++w)
        s += red[w];
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        yr[c] = expf(xr[c] - m) * inv;
}
