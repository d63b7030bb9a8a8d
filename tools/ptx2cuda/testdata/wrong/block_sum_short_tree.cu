// Wrong on purpose: the tree stops one level early, so each partial
// misses half of its block (wrong_output).
#define BLOCK 256
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
    for (unsigned stride = BLOCK / 2; stride > 1; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = s[0];
}
