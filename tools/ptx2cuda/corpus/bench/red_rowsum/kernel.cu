// Row sums of a rows x cols matrix, one block per row: threads stride over
// the row, then a shared-memory tree (unrolled) adds the block's values.
#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void __launch_bounds__(BLOCK) row_sum(const float* __restrict__ m, float* __restrict__ sums, int cols)
{
    __shared__ float s[BLOCK];
    const float* row = m + (size_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        acc += row[c];
    s[threadIdx.x] = acc;
    __syncthreads();
#pragma unroll
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sums[blockIdx.x] = s[0];
}
