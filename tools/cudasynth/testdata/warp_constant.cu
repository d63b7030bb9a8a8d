// Warp shuffles and constant memory: a polynomial with coefficients in
// constant memory is evaluated per element, then each warp sums its values
// with __shfl_down_sync.
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

#define DEGREE 4
__constant__ float c_coef[DEGREE + 1];

__inline__ __device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void poly_warp_sums(const float *x, float *warp_out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (i < n) {
        float acc = c_coef[DEGREE];
        for (int k = DEGREE - 1; k >= 0; k--) acc = acc * x[i] + c_coef[k];
        v = acc;
    }
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) warp_out[i / 32] = v;
}

int main() {
    const int n = 4096, warps = n / 32;
    float coef[DEGREE + 1] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f};
    CHECK(cudaMemcpyToSymbol(c_coef, coef, sizeof(coef)));
    float *h_x = (float *)malloc(n * sizeof(float)), h_out[warps];
    for (int i = 0; i < n; i++) h_x[i] = (float)(i % 64) / 32.0f;
    float *d_x, *d_out;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_out, warps * sizeof(float)));
    CHECK(cudaMemcpy(d_x, h_x, n * sizeof(float), cudaMemcpyHostToDevice));
    poly_warp_sums<<<n / 128, 128>>>(d_x, d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost));
    double total = 0;
    for (int w = 0; w < warps; w++) total += h_out[w];
    printf("warp0 %.5f warp1 %.5f total %.4f\n", h_out[0], h_out[1], total);
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_out));
    free(h_x);
    return 0;
}
