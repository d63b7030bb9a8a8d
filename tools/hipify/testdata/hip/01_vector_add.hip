// Vector addition with the usual error-checking macro.
#include <cstdio>
#include <cstdlib>
#include <hip/hip_runtime.h>

#define CUDA_CHECK(call)                                                     \
    do {                                                                     \
        hipError_t err_ = (call);                                           \
        if (err_ != hipSuccess) {                                           \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                      \
                    hipGetErrorString(err_), __FILE__, __LINE__);           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1 << 16;
    size_t bytes = n * sizeof(float);
    float *ha = (float*)malloc(bytes), *hb = (float*)malloc(bytes), *hc = (float*)malloc(bytes);
    for (int i = 0; i < n; ++i) { ha[i] = i * 0.5f; hb[i] = 2.0f * i; }
    float *da, *db, *dc;
    CUDA_CHECK(hipMalloc(&da, bytes));
    CUDA_CHECK(hipMalloc(&db, bytes));
    CUDA_CHECK(hipMalloc(&dc, bytes));
    CUDA_CHECK(hipMemcpy(da, ha, bytes, hipMemcpyHostToDevice));
    CUDA_CHECK(hipMemcpy(db, hb, bytes, hipMemcpyHostToDevice));
    dim3 block(256), grid((n + block.x - 1) / block.x);
    vecAdd<<<grid, block>>>(da, db, dc, n);
    CUDA_CHECK(hipGetLastError());
    CUDA_CHECK(hipMemcpy(hc, dc, bytes, hipMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += hc[i];
    printf("sum=%.1f c[12345]=%.1f\n", sum, hc[12345]);
    CUDA_CHECK(hipFree(da)); CUDA_CHECK(hipFree(db)); CUDA_CHECK(hipFree(dc));
    free(ha); free(hb); free(hc);
    return 0;
}
