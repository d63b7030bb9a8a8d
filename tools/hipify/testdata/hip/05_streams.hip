// Overlapping copies and kernels on several streams with pinned memory.
#include <cstdio>
#include <hip/hip_runtime.h>

__global__ void scale(float* x, int n, float f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * f + 1.0f;
}

int main() {
    const int nStreams = 4, chunk = 1 << 14, n = nStreams * chunk;
    float* h;
    hipHostMalloc((void**)&h, n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
    float* d;
    hipMalloc(&d, n * sizeof(float));
    hipStream_t streams[nStreams];
    for (int s = 0; s < nStreams; ++s) {
        if (s % 2 == 0) hipStreamCreate(&streams[s]);
        else hipStreamCreateWithFlags(&streams[s], hipStreamNonBlocking);
    }
    for (int s = 0; s < nStreams; ++s) {
        int off = s * chunk;
        hipMemcpyAsync(d + off, h + off, chunk * sizeof(float), hipMemcpyHostToDevice, streams[s]);
        scale<<<chunk / 256, 256, 0, streams[s]>>>(d + off, chunk, (float)(s + 1));
        hipMemcpyAsync(h + off, d + off, chunk * sizeof(float), hipMemcpyDeviceToHost, streams[s]);
    }
    for (int s = 0; s < nStreams; ++s) {
        hipStreamSynchronize(streams[s]);
        if (hipStreamQuery(streams[s]) != hipSuccess) printf("stream %d busy\n", s);
    }
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += h[i];
    printf("sum=%.1f\n", sum);
    for (int s = 0; s < nStreams; ++s) hipStreamDestroy(streams[s]);
    hipFree(d);
    hipHostFree(h);
    hipError_t cudaStatus = hipDeviceSynchronize();
    return cudaStatus == hipSuccess ? 0 : 1;
}
