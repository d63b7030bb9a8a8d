#include <math.h>

// Row softmax, one 256-thread block per row. Max and sum are reduced with
// a shared-memory tree here (the PTX uses warp shuffles first).
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    __shared__ float sm[256];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* dst = y + (size_t)blockIdx.x * cols;
    const int t = threadIdx.x;

    float mx = -INFINITY;
    for (int c = t; c < cols; c += 256)
        mx = fmaxf(mx, row[c]);
    sm[t] = mx;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s)
            sm[t] = fmaxf(sm[t], sm[t + s]);
        __syncthreads();
    }
    mx = sm[0];
    __syncthreads();

    float sum = 0.0f;
    for (int c = t; c < cols; c += 256)
        sum += expf(row[c] - mx);
    sm[t] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s)
            sm[t] += sm[t + s];
        __syncthreads();
    }
    const float inv = 1.0f / sm[0];
    for (int c = t; c < cols; c += 256)
        dst[c] = expf(row[c] - mx) * inv;
}
