// Timing with events and cross-stream ordering with cudaStreamWaitEvent.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(int* a, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v;
}

__global__ void addOne(int* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1;
}

int main() {
    const int n = 1 << 18;
    int* d;
    cudaMalloc(&d, n * sizeof(int));
    cudaEvent_t start, stop, ready;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEventRecord(start, s1);
    fill<<<n / 256, 256, 0, s1>>>(d, n, 41);
    cudaEventRecord(ready, s1);
    cudaStreamWaitEvent(s2, ready, 0);
    addOne<<<n / 256, 256, 0, s2>>>(d, n);
    cudaEventRecord(stop, s2);
    cudaEventSynchronize(stop);
    float ms = -1.0f;
    cudaEventElapsedTime(&ms, start, stop);
    int h[4];
    cudaMemcpy(h, d + n - 4, sizeof(h), cudaMemcpyDeviceToHost);
    printf("value=%d timed=%s query=%d\n", h[3], ms >= 0.0f ? "yes" : "no",
           (int)(cudaEventQuery(stop) == cudaSuccess));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaEventDestroy(ready);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFree(d);
    return 0;
}
