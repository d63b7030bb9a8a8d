// Work-efficient (Blelloch) exclusive scan of 2 * BLOCK floats per block
// in shared memory: an up-sweep builds partial sums, the root is cleared
// (its value saved as the block total), and a down-sweep distributes them.
#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void __launch_bounds__(BLOCK) scan_blelloch(const float* __restrict__ in, float* __restrict__ out,
                                                       float* __restrict__ block_sums, int n)
{
    __shared__ float s[2 * BLOCK];
    const int t = threadIdx.x;
    const int base = blockIdx.x * 2 * BLOCK;
    s[2 * t] = base + 2 * t < n ? in[base + 2 * t] : 0.0f;
    s[2 * t + 1] = base + 2 * t + 1 < n ? in[base + 2 * t + 1] : 0.0f;
    int off = 1;
#pragma unroll
    for (int d = BLOCK; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            const int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
            s[bi] += s[ai];
        }
        off <<= 1;
    }
    if (t == 0) {
        block_sums[blockIdx.x] = s[2 * BLOCK - 1];
        s[2 * BLOCK - 1] = 0.0f;
    }
#pragma unroll
    for (int d = 1; d < 2 * BLOCK; d <<= 1) {
        off >>= 1;
        __syncthreads();
        if (t < d) {
            const int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
            const float tmp = s[ai];
            s[ai] = s[bi];
            s[bi] += tmp;
        }
    }
    __syncthreads();
    if (base + 2 * t < n)
        out[base + 2 * t] = s[2 * t];
    if (base + 2 * t + 1 < n)
        out[base + 2 * t + 1] = s[2 * t + 1];
}
