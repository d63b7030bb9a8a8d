// saxpy: y = a * x + y over n floats. Each thread handles ITEMS elements
// BLOCK apart, so every load and store of a warp is coalesced.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef UNROLL
#define UNROLL ITEMS
#endif

constexpr int kUnroll = UNROLL;

__global__ void __launch_bounds__(BLOCK) saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll kUnroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = base + k * BLOCK;
        if (i < n)
            y[i] = a * x[i] + y[i];
    }
}
