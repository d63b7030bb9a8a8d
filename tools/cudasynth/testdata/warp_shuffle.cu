// Warp-level reduction with shuffles.
#include <cstdio>
#include <cuda_runtime.h>

__inline__ __device__ int warp_reduce(int v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void warp_sums(const int *in, int *out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    v = warp_reduce(v);
    if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

int main() {
    const int n = 1024, warps = n / 32;
    int h_in[n], h_out[warps];
    for (int i = 0; i < n; i++) h_in[i] = i % 7;
    int *d_in, *d_out;
    cudaMalloc(&d_in, sizeof(h_in));
    cudaMalloc(&d_out, sizeof(h_out));
    cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    warp_sums<<<n / 128, 128>>>(d_in, d_out);
    cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
    long total = 0;
    for (int w = 0; w < warps; w++) total += h_out[w];
    printf("warp0 %d warp31 %d total %ld\n", h_out[0], h_out[warps - 1], total);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
