// Shared memory and atomics: each block reduces its slice in shared memory,
// then one thread per block adds the block's sum to the global totals with
// atomicAdd (an integer count, a float sum and a 16-bin histogram).
#include <cstdio>
#include <cuda_runtime.h>
#include <cstdlib>

#define CHECK(call)                                                            \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                \
                    cudaGetErrorString(err_));                                 \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define N (1 << 16)
#define BLOCK 256
#define BINS 16

__global__ void reduce_atomics(const int *in, int n, unsigned long long *total, unsigned int *hist) {
    __shared__ int tile[BLOCK];
    __shared__ unsigned int local_hist[BINS];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    if (tid < BINS) local_hist[tid] = 0;
    tile[tid] = i < n ? in[i] : 0;
    __syncthreads();
    if (i < n) atomicAdd(&local_hist[in[i] % BINS], 1u);
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) tile[tid] += tile[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(total, (unsigned long long)tile[0]);
    if (tid < BINS) atomicAdd(&hist[tid], local_hist[tid]);
}

int main() {
    int *h_in = (int *)malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) h_in[i] = (i * 7919) % 1000;
    int *d_in;
    unsigned long long *d_total, total = 0;
    unsigned int *d_hist, hist[BINS];
    CHECK(cudaMalloc(&d_in, N * sizeof(int)));
    CHECK(cudaMalloc(&d_total, sizeof(total)));
    CHECK(cudaMalloc(&d_hist, sizeof(hist)));
    CHECK(cudaMemcpy(d_in, h_in, N * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_total, 0, sizeof(total)));
    CHECK(cudaMemset(d_hist, 0, sizeof(hist)));
    reduce_atomics<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(d_in, N, d_total, d_hist);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&total, d_total, sizeof(total), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hist, d_hist, sizeof(hist), cudaMemcpyDeviceToHost));
    unsigned long long expect = 0;
    for (int i = 0; i < N; i++) expect += h_in[i];
    printf("total %llu expected %llu\n", total, expect);
    printf("hist[0] %u hist[15] %u\n", hist[0], hist[BINS - 1]);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_total));
    CHECK(cudaFree(d_hist));
    free(h_in);
    return 0;
}
