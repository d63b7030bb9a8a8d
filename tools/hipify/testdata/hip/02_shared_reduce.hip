// Block reduction in static and dynamic shared memory.
#include <cstdio>
#include <vector>
#include <hip/hip_runtime.h>

#define TILE 256

__global__ void reduceStatic(const int* in, int* out, int n) {
    __shared__ int s[TILE];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x * 2 + tid;
    int v = 0;
    if (i < n) v += in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduceDynamic(const int* in, int* out, int n) {
    extern __shared__ int sdata[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) sdata[tid] += sdata[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

int main() {
    const int n = 100000;
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i) h[i] = i % 7;
    int *din, *dout;
    int blocks = (n + TILE * 2 - 1) / (TILE * 2);
    hipMalloc((void**)&din, n * sizeof(int));
    hipMalloc((void**)&dout, n * sizeof(int));
    hipMemcpy(din, h.data(), n * sizeof(int), hipMemcpyHostToDevice);
    reduceStatic<<<blocks, TILE>>>(din, dout, n);
    std::vector<int> partial(blocks);
    hipMemcpy(partial.data(), dout, blocks * sizeof(int), hipMemcpyDeviceToHost);
    long total = 0;
    for (int p : partial) total += p;
    int blocks2 = (n + TILE - 1) / TILE;
    reduceDynamic<<<blocks2, TILE, TILE * sizeof(int)>>>(din, dout, n);
    partial.resize(blocks2);
    hipMemcpy(partial.data(), dout, blocks2 * sizeof(int), hipMemcpyDeviceToHost);
    long total2 = 0;
    for (int p : partial) total2 += p;
    printf("static=%ld dynamic=%ld\n", total, total2);
    hipFree(din);
    hipFree(dout);
    return hipGetLastError() == hipSuccess ? 0 : 1;
}
