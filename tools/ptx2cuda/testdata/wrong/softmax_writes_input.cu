// Wrong on purpose: right outputs, but it overwrites its input with the
// shifted values (the original only reads x: wrong_output).
#define BLOCK 256
#define WARPS (BLOCK / 32)
__global__ void __launch_bounds__(BLOCK) softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    __shared__ float red[WARPS];
    float* xr = const_cast<float*>(x) + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        m = fmaxf(m, xr[c]);
    for (int off = 16; off > 0; off >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (lane == 0)
        red[warp] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < WARPS; ++w)
        m = fmaxf(m, red[w]);
    __syncthreads();
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        xr[c] -= m;
        s += expf(xr[c]);
    }
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0)
        red[warp] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < WARPS; ++w)
        s += red[w];
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        yr[c] = expf(xr[c]) / s;
}
