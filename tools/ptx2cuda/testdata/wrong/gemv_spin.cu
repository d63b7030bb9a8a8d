// Wrong on purpose: the first row's warp spins on a condition that always
// holds (x is in [-1, 1]), reading x through volatile loads the compiler
// must keep (timeout).
#define WARPS 4
__global__ void __launch_bounds__(WARPS * 32) gemv_warp(const float* __restrict__ A, const float* __restrict__ x,
                                                        float* __restrict__ y, int rows, int cols)
{
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows)
        return;
    if (row == 0)
        while (((const volatile float*)x)[0] < 1e30f)
            ;
    const float* a = A + (size_t)row * cols;
    float acc = 0.0f;
    for (int c = lane; c < cols; c += 32)
        acc += a[c] * x[c];
    for (int mask = 16; mask > 0; mask >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, mask);
    if (lane == 0)
        y[row] = acc;
}
