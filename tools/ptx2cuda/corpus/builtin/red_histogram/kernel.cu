// Histogram of n keys in [0, BINS): each block counts into a private
// shared-memory histogram with atomicAdd, then adds it to the global one.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef BINS
#define BINS 256
#endif

__global__ void __launch_bounds__(BLOCK) histogram(const int* __restrict__ keys, int n, unsigned int* __restrict__ hist)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += BLOCK)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)
        atomicAdd(&local[keys[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += BLOCK) {
        const unsigned int c = local[b];
        if (c != 0)
            atomicAdd(&hist[b], c);
    }
}
