// Per-block inclusive prefix sums (Hillis-Steele, double-buffered in
// shared memory): out holds each block's running sums, block_sums each
// block's total (the input of a second pass, not done here).
#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void __launch_bounds__(BLOCK) scan_block(const float* __restrict__ in, float* __restrict__ out,
                                                    float* __restrict__ block_sums, int n)
{
    __shared__ float buf[2][BLOCK];
    const int t = threadIdx.x;
    const int i = blockIdx.x * BLOCK + t;
    int pin = 0;
    buf[0][t] = i < n ? in[i] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int off = 1; off < BLOCK; off <<= 1) {
        float v = buf[pin][t];
        if (t >= off)
            v += buf[pin][t - off];
        buf[1 - pin][t] = v;
        pin = 1 - pin;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[pin][t];
    if (t == BLOCK - 1)
        block_sums[blockIdx.x] = buf[pin][t];
}
