// Per-row argmax and max of a rows x cols matrix, one block per row. Ties
// go to the lowest column. Threads scan strided columns, then a shared
// memory tree combines (value, index) pairs.
#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ void better(float& v, int& i, float v2, int i2)
{
    if (v2 > v || (v2 == v && i2 < i)) {
        v = v2;
        i = i2;
    }
}

__global__ void __launch_bounds__(BLOCK) row_argmax(const float* __restrict__ m, int* __restrict__ idx,
                                                    float* __restrict__ val, int cols)
{
    __shared__ float sv[BLOCK];
    __shared__ int si[BLOCK];
    const float* row = m + (size_t)blockIdx.x * cols;
    float v = -INFINITY;
    int i = 0x7fffffff;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        better(v, i, row[c], c);
    sv[threadIdx.x] = v;
    si[threadIdx.x] = i;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            better(v, i, sv[threadIdx.x + stride], si[threadIdx.x + stride]);
            sv[threadIdx.x] = v;
            si[threadIdx.x] = i;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        idx[blockIdx.x] = i;
        val[blockIdx.x] = v;
    }
}
