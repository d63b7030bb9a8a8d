// Compiler guards, device printf, fast-math intrinsics, read-only loads and mapped pinned memory.
#include <cstdio>
#include <hip/hip_runtime.h>

__host__ __device__ inline float where() {
#ifdef __HIP_DEVICE_COMPILE__
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
#if defined(__HIPCC__)
    const char* compiler = "cuda-compatible";
#else
    const char* compiler = "host";
#endif
    const int n = 256;
    hipSetDeviceFlags(hipDeviceMapHost);
    float *hin, *hout;
    hipHostMalloc((void**)&hin, n * sizeof(float), hipHostMallocMapped);
    hipHostMalloc((void**)&hout, n * sizeof(float), hipHostMallocMapped);
    for (int i = 0; i < n; ++i) hin[i] = (float)(i - 128) / 32.0f;
    float *din, *dout;
    hipHostGetDevicePointer((void**)&din, hin, 0);
    hipHostGetDevicePointer((void**)&dout, hout, 0);
    kernel<<<1, n>>>(din, dout, n);
    hipDeviceSynchronize();
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += hout[i];
    printf("%s host where=%.0f sum=%.2f\n", compiler, where(), sum);
    hipHostFree(hin);
    hipHostFree(hout);
    return hipPeekAtLastError() == hipSuccess ? 0 : 1;
}
