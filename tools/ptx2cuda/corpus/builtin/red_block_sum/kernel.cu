// Per-block sums: each block adds 2 * BLOCK consecutive floats (two per
// thread while loading) with a shared-memory tree and writes one partial
// sum. The tree's loop has a compile-time trip count and is unrolled.
#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void __launch_bounds__(BLOCK) block_sum(const float* __restrict__ in, float* __restrict__ partial, int n)
{
    __shared__ float s[BLOCK];
    const unsigned t = threadIdx.x;
    const unsigned i = blockIdx.x * (2 * BLOCK) + t;
    float v = 0.0f;
    if (i < n)
        v = in[i];
    if (i + BLOCK < n)
        v += in[i + BLOCK];
    s[t] = v;
    __syncthreads();
#pragma unroll
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = s[0];
}
