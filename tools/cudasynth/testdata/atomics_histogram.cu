// 64-bin histogram with atomicAdd into shared, then global memory.
#include <cstdio>
#include <cuda_runtime.h>

#define BINS 64

__global__ void histogram(const unsigned int *data, int n, unsigned int *hist) {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&hist[b], local[b]);
}

int main() {
    const int n = 100000;
    unsigned int *h = (unsigned int *)malloc(n * sizeof(unsigned int));
    for (int i = 0; i < n; i++) h[i] = (unsigned int)(i * 2654435761u >> 7);
    unsigned int *d_data, *d_hist;
    cudaMalloc(&d_data, n * sizeof(unsigned int));
    cudaMalloc(&d_hist, BINS * sizeof(unsigned int));
    cudaMemcpy(d_data, h, n * sizeof(unsigned int), cudaMemcpyHostToDevice);
    cudaMemset(d_hist, 0, BINS * sizeof(unsigned int));
    histogram<<<32, 128>>>(d_data, n, d_hist);
    unsigned int hist[BINS];
    cudaMemcpy(hist, d_hist, sizeof(hist), cudaMemcpyDeviceToHost);
    unsigned long long sum = 0;
    for (int b = 0; b < BINS; b++) sum += hist[b];
    printf("bin0 %u bin63 %u sum %llu\n", hist[0], hist[BINS - 1], sum);
    cudaFree(d_data);
    cudaFree(d_hist);
    free(h);
    return 0;
}
