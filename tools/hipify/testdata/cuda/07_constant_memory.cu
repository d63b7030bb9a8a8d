// Constant and global device symbols copied to and from the host.
#include <cstdio>
#include <cuda_runtime.h>

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
    cudaMemcpyToSymbol(c_filter, h_filter, sizeof(h_filter));
    cudaMemcpyToSymbol(c_len, &n, sizeof(int), 0, cudaMemcpyHostToDevice);
    int zero = 0;
    cudaMemcpyToSymbol(d_calls, &zero, sizeof(int));
    float *din, *dout;
    cudaMalloc(&din, sizeof(h_in));
    cudaMalloc(&dout, sizeof(h_out));
    cudaMemcpy(din, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    convolve<<<(n + 127) / 128, 128>>>(din, dout);
    cudaMemcpy(h_out, dout, sizeof(h_out), cudaMemcpyDeviceToHost);
    int calls = 0;
    cudaMemcpyFromSymbol(&calls, d_calls, sizeof(int));
    int* p_calls = nullptr;
    cudaGetSymbolAddress((void**)&p_calls, d_calls);
    size_t symSize = 0;
    cudaGetSymbolSize(&symSize, c_filter);
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += h_out[i];
    printf("sum=%.2f calls=%d addr=%s size=%zu\n", sum, calls, p_calls ? "ok" : "null", symSize);
    cudaFree(din);
    cudaFree(dout);
    return 0;
}
