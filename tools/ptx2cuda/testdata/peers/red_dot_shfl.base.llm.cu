// Per-block partial dot products: grid-stride accumulation, butterfly
// (xor) warp reduction, warp results combined by thread 0.
__global__ void dot_partial(const float* x, const float* y, float* partial, int n)
{
    __shared__ float buf[8];
    float s = 0.0f;
    unsigned int i = blockIdx.x * 256u + threadIdx.x;
    const unsigned int step = gridDim.x * 256u;
    while (i < (unsigned int)n) {
        s = fmaf(x[i], y[i], s);
        i += step;
    }
    for (int m = 16; m >= 1; m >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, m);
    if ((threadIdx.x & 31u) == 0)
        buf[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int k = 0; k < 8; ++k)
            t += buf[k];
        partial[blockIdx.x] = t;
    }
}
