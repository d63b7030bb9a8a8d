// 1D convolution over channels: y[co][t] = bias[co] +
// sum_ci sum_k w[co][ci][k] * x[ci][t + k - KW/2], zero padded; one thread
// per output position, blockIdx.y selects the output channel.
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef KW
#define KW 3
#endif

__global__ void __launch_bounds__(BLOCK) conv1d_channels(const float* __restrict__ x, const float* __restrict__ w,
                                                         const float* __restrict__ bias, float* __restrict__ y,
                                                         int cin, int len)
{
    const int t = blockIdx.x * BLOCK + threadIdx.x;
    const int co = blockIdx.y;
    if (t >= len)
        return;
    float acc = bias[co];
    for (int ci = 0; ci < cin; ++ci) {
        const float* xr = x + ci * len;
        const float* wr = w + (co * cin + ci) * KW;
#pragma unroll
        for (int k = 0; k < KW; ++k) {
            const int p = t + k - KW / 2;
            if (p >= 0 && p < len)
                acc += wr[k] * xr[p];
        }
    }
    y[co * len + t] = acc;
}
