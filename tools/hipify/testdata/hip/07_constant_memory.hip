// Constant and global device symbols copied to and from the host.
#include <cstdio>
#include <hip/hip_runtime.h>

#define TAPS 5

__constant__ float c_filter[TAPS];
__constant__ int c_len;
__device__ int d_calls;

__global__ void convolve(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c_len) return;
    float acc = 0.0f;
    for (int k = 0; k < TAPS; ++k) {
        int j = i + k - TAPS / 2;
        if (j >= 0 && j < c_len) acc += c_filter[k] * in[j];
    }
    out[i] = acc;
    atomicAdd(&d_calls, 1);
}

int main() {
    const int n = 1000;
    float h_filter[TAPS] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
    float h_in[n], h_out[n];
    for (int i = 0; i < n; ++i) h_in[i] = (float)(i % 10);
    hipMemcpyToSymbol(HIP_SYMBOL(c_filter), h_filter, sizeof(h_filter));
    hipMemcpyToSymbol(HIP_SYMBOL(c_len), &n, sizeof(int), 0, hipMemcpyHostToDevice);
    int zero = 0;
    hipMemcpyToSymbol(HIP_SYMBOL(d_calls), &zero, sizeof(int));
    float *din, *dout;
    hipMalloc(&din, sizeof(h_in));
    hipMalloc(&dout, sizeof(h_out));
    hipMemcpy(din, h_in, sizeof(h_in), hipMemcpyHostToDevice);
    convolve<<<(n + 127) / 128, 128>>>(din, dout);
    hipMemcpy(h_out, dout, sizeof(h_out), hipMemcpyDeviceToHost);
    int calls = 0;
    hipMemcpyFromSymbol(&calls, HIP_SYMBOL(d_calls), sizeof(int));
    int* p_calls = nullptr;
    hipGetSymbolAddress((void**)&p_calls, HIP_SYMBOL(d_calls));
    size_t symSize = 0;
    hipGetSymbolSize(&symSize, HIP_SYMBOL(c_filter));
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += h_out[i];
    printf("sum=%.2f calls=%d addr=%s size=%zu\n", sum, calls, p_calls ? "ok" : "null", symSize);
    hipFree(din);
    hipFree(dout);
    return 0;
}
