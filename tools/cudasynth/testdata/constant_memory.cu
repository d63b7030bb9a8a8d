// 1-D convolution with the filter in constant memory.
#include <cstdio>
#include <cuda_runtime.h>

#define RADIUS 3
__constant__ float c_filter[2 * RADIUS + 1];

__global__ void convolve(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) {
        int j = min(max(i + k, 0), n - 1);
        acc += c_filter[k + RADIUS] * in[j];
    }
    out[i] = acc;
}

int main() {
    const int n = 4096;
    float filter[2 * RADIUS + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    cudaMemcpyToSymbol(c_filter, filter, sizeof(filter));
    float *h = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = (float)(i % 32);
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
    convolve<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
    cudaMemcpy(h, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += h[i];
    printf("out[5] %.4f out[31] %.4f sum %.3f\n", h[5], h[31], sum);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h);
    return 0;
}
