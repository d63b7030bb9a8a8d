// Two streams doing SAXPY on halves of a vector, timed with events.
#include <cstdio>
#include <cuda_runtime.h>
#include <cstdlib>

#define CHECK(call)                                                            \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                \
                    cudaGetErrorString(err_));                                 \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    const int n = 1 << 20, half = n / 2;
    float *x, *y;
    CHECK(cudaMallocHost(&x, n * sizeof(float)));
    CHECK(cudaMallocHost(&y, n * sizeof(float)));
    for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = (float)(i % 100); }
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    cudaStream_t s[2];
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    for (int k = 0; k < 2; k++) {
        CHECK(cudaStreamCreate(&s[k]));
        int off = k * half;
        CHECK(cudaMemcpyAsync(dx + off, x + off, half * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        CHECK(cudaMemcpyAsync(dy + off, y + off, half * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        saxpy<<<(half + 255) / 256, 256, 0, s[k]>>>(half, 2.0f, dx + off, dy + off);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(y + off, dy + off, half * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
    }
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    double sum = 0;
    for (int i = 0; i < n; i++) sum += y[i];
    printf("y[0] %.1f y[n-1] %.1f sum %.1f\n", y[0], y[n - 1], sum);
    printf("elapsed time %.3f ms\n", ms);
    for (int k = 0; k < 2; k++) cudaStreamDestroy(s[k]);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFreeHost(x));
    CHECK(cudaFreeHost(y));
    return 0;
}
