// Overlapping copies and kernels on several streams with pinned memory.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float* x, int n, float f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * f + 1.0f;
}

int main() {
    const int nStreams = 4, chunk = 1 << 14, n = nStreams * chunk;
    float* h;
    cudaMallocHost((void**)&h, n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
    float* d;
    cudaMalloc(&d, n * sizeof(float));
    cudaStream_t streams[nStreams];
    for (int s = 0; s < nStreams; ++s) {
        if (s % 2 == 0) cudaStreamCreate(&streams[s]);
        else cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking);
    }
    for (int s = 0; s < nStreams; ++s) {
        int off = s * chunk;
        cudaMemcpyAsync(d + off, h + off, chunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]);
        scale<<<chunk / 256, 256, 0, streams[s]>>>(d + off, chunk, (float)(s + 1));
        cudaMemcpyAsync(h + off, d + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, streams[s]);
    }
    for (int s = 0; s < nStreams; ++s) {
        cudaStreamSynchronize(streams[s]);
        if (cudaStreamQuery(streams[s]) != cudaSuccess) printf("stream %d busy\n", s);
    }
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += h[i];
    printf("sum=%.1f\n", sum);
    for (int s = 0; s < nStreams; ++s) cudaStreamDestroy(streams[s]);
    cudaFree(d);
    cudaFreeHost(h);
    cudaError_t cudaStatus = cudaDeviceSynchronize();
    return cudaStatus == cudaSuccess ? 0 : 1;
}
