// Dot product partials: a grid-stride loop accumulates x[i] * y[i] per
// thread, warps reduce with __shfl_down_sync, warp results meet in shared
// memory and the first warp reduces them; one partial per block (no
// atomics, so the result does not depend on block order).
// Adapted from the cuda-synth corpus program basic_01_reduce_sum_shfl.
#ifndef BLOCK
#define BLOCK 256
#endif

#define WARPS (BLOCK / 32)

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__global__ void __launch_bounds__(BLOCK) dot_partial(const float* __restrict__ x, const float* __restrict__ y,
                                                     float* __restrict__ partial, int n)
{
    __shared__ float warp_part[WARPS];
    float acc = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)
        acc += x[i] * y[i];
    acc = warp_sum(acc);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        float v = lane < WARPS ? warp_part[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0)
            partial[blockIdx.x] = v;
    }
}
