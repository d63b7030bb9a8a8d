// Wrong on purpose: subtracts y instead of adding it (wrong_output).
#define BLOCK 256
#define ITEMS 4
__global__ void __launch_bounds__(BLOCK) saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = base + k * BLOCK;
        if (i < n)
            y[i] = a * x[i] - y[i];
    }
}
