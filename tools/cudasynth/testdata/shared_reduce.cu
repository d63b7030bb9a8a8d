// Block-wise sum with shared memory and __syncthreads.
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 16)
#define BLOCK 256

__global__ void block_sum(const float *in, float *out, int n) {
    __shared__ float tile[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    tile[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) tile[tid] += tile[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = tile[0];
}

int main() {
    const int blocks = (N + BLOCK - 1) / BLOCK;
    float *h_in = (float *)malloc(N * sizeof(float));
    float *h_out = (float *)malloc(blocks * sizeof(float));
    for (int i = 0; i < N; i++) h_in[i] = (float)(i % 17) * 0.5f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, N * sizeof(float));
    cudaMalloc(&d_out, blocks * sizeof(float));
    cudaMemcpy(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice);
    block_sum<<<blocks, BLOCK>>>(d_in, d_out, N);
    cudaMemcpy(h_out, d_out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    double total = 0;
    for (int b = 0; b < blocks; b++) total += h_out[b];
    printf("blocks %d first %.3f total %.3f\n", blocks, h_out[0], total);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_out);
    return 0;
}
