// Gather with scaling: out[i] = in[idx[i]] * scale, ITEMS elements per
// thread, BLOCK apart.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 2
#endif

__global__ void __launch_bounds__(BLOCK) gather_scale(const float* __restrict__ in, const int* __restrict__ idx,
                                                      float* __restrict__ out, int n, float scale)
{
    const int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = base + k * BLOCK;
        if (i < n)
            out[i] = __ldg(&in[idx[i]]) * scale;
    }
}
