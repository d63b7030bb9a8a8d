// Wrong on purpose: counts with plain increments in shared memory, so
// concurrent updates are lost (integer outputs differ: wrong_output).
#define BLOCK 256
#define BINS 256
__global__ void __launch_bounds__(BLOCK) histogram(const int* __restrict__ keys, int n, unsigned int* __restrict__ hist)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += BLOCK)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) {
        volatile unsigned int* slot = &local[keys[i]];
        *slot = *slot + 1;
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += BLOCK)
        atomicAdd(&hist[b], local[b]);
}
