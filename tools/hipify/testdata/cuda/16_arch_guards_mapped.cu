// Compiler guards, device printf, fast-math intrinsics, read-only loads and mapped pinned memory.
#include <cstdio>
#include <cuda_runtime.h>

__host__ __device__ inline float where() {
#ifdef __CUDA_ARCH__
    return 1.0f;
#else
    return 0.0f;
#endif
}

__device__ __forceinline__ float fastSigmoid(float x) {
    return __fdividef(1.0f, 1.0f + __expf(-x));
}

__global__ void kernel(const float* __restrict__ in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fastSigmoid(__ldg(&in[i])) + where() + rsqrtf(4.0f);
    if (i == 0) printf("device side: where=%.0f\n", where());
}

int main() {
#if defined(__CUDACC__)
    const char* compiler = "cuda-compatible";
#else
    const char* compiler = "host";
#endif
    const int n = 256;
    cudaSetDeviceFlags(cudaDeviceMapHost);
    float *hin, *hout;
    cudaHostAlloc((void**)&hin, n * sizeof(float), cudaHostAllocMapped);
    cudaHostAlloc((void**)&hout, n * sizeof(float), cudaHostAllocMapped);
    for (int i = 0; i < n; ++i) hin[i] = (float)(i - 128) / 32.0f;
    float *din, *dout;
    cudaHostGetDevicePointer((void**)&din, hin, 0);
    cudaHostGetDevicePointer((void**)&dout, hout, 0);
    kernel<<<1, n>>>(din, dout, n);
    cudaDeviceSynchronize();
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += hout[i];
    printf("%s host where=%.0f sum=%.2f\n", compiler, where(), sum);
    cudaFreeHost(hin);
    cudaFreeHost(hout);
    return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
