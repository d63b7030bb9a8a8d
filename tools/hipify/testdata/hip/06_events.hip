// Timing with events and cross-stream ordering with cudaStreamWaitEvent.
#include <cstdio>
#include <hip/hip_runtime.h>

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
    hipMalloc(&d, n * sizeof(int));
    hipEvent_t start, stop, ready;
    hipEventCreate(&start);
    hipEventCreate(&stop);
    hipEventCreateWithFlags(&ready, hipEventDisableTiming);
    hipStream_t s1, s2;
    hipStreamCreate(&s1);
    hipStreamCreate(&s2);
    hipEventRecord(start, s1);
    fill<<<n / 256, 256, 0, s1>>>(d, n, 41);
    hipEventRecord(ready, s1);
    hipStreamWaitEvent(s2, ready, 0);
    addOne<<<n / 256, 256, 0, s2>>>(d, n);
    hipEventRecord(stop, s2);
    hipEventSynchronize(stop);
    float ms = -1.0f;
    hipEventElapsedTime(&ms, start, stop);
    int h[4];
    hipMemcpy(h, d + n - 4, sizeof(h), hipMemcpyDeviceToHost);
    printf("value=%d timed=%s query=%d\n", h[3], ms >= 0.0f ? "yes" : "no",
           (int)(hipEventQuery(stop) == hipSuccess));
    hipEventDestroy(start);
    hipEventDestroy(stop);
    hipEventDestroy(ready);
    hipStreamDestroy(s1);
    hipStreamDestroy(s2);
    hipFree(d);
    return 0;
}
