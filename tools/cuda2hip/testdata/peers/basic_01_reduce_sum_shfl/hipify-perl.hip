#include "hip/hip_runtime.h"
// Parallel reduction computing the sum of an int array of 16384 elements.
// Focus: warp-level programming. Each warp reduces with __shfl_down,
// warp partials meet in shared memory, and each block adds its result to
// the global total with a single atomicAdd. Loads use a grid-stride loop so
// the grid size is independent of the array size.
#include <cstdio>
#include <cstdlib>
#include <hip/hip_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        hipError_t err_ = (call);                                            \
        if (err_ != hipSuccess) {                                            \
            fprintf(stderr, "CUDA error '%s' at %s:%d\n",                     \
                    hipGetErrorString(err_), __FILE__, __LINE__);            \
            exit(EXIT_FAILURE);                                               \
        }                                                                     \
    } while (0)

constexpr int N = 16384;
constexpr int BLOCK_SIZE = 256;
constexpr int WARP_SIZE = 32;

__inline__ __device__ int warpReduceSum(int value) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
        value += __shfl_down(value, offset);
    return value;
}

__global__ void reduceSumKernel(const int* __restrict__ in, int n, int* total) {
    __shared__ int warpSums[BLOCK_SIZE / WARP_SIZE];

    int sum = 0;
    for (int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; i < n; i += hipBlockDim_x * hipGridDim_x)
        sum += in[i];

    const int lane = hipThreadIdx_x % WARP_SIZE;
    const int warp = hipThreadIdx_x / WARP_SIZE;

    sum = warpReduceSum(sum);
    if (lane == 0) warpSums[warp] = sum;
    __syncthreads();

    if (warp == 0) {
        sum = (lane < hipBlockDim_x / WARP_SIZE) ? warpSums[lane] : 0;
        sum = warpReduceSum(sum);
        if (lane == 0) atomicAdd(total, sum);
    }
}

int main() {
    int* h_in = (int*)malloc(N * sizeof(int));
    if (!h_in) {
        fprintf(stderr, "host allocation failed\n");
        return 1;
    }
    long long expected = 0;
    for (int i = 0; i < N; ++i) {
        h_in[i] = (i * 37 + 11) % 101 - 50;
        expected += h_in[i];
    }

    int *d_in = nullptr, *d_total = nullptr;
    CUDA_CHECK(hipMalloc((void**)&d_in, N * sizeof(int)));
    CUDA_CHECK(hipMalloc((void**)&d_total, sizeof(int)));
    CUDA_CHECK(hipMemcpy(d_in, h_in, N * sizeof(int), hipMemcpyHostToDevice));
    CUDA_CHECK(hipMemset(d_total, 0, sizeof(int)));

    const int grid = 16;  // fewer blocks than elements/BLOCK_SIZE: the grid-stride loop covers the rest
    hipLaunchKernelGGL(reduceSumKernel, dim3(grid), dim3(BLOCK_SIZE), 0, 0, d_in, N, d_total);
    CUDA_CHECK(hipGetLastError());
    CUDA_CHECK(hipDeviceSynchronize());

    int h_total = 0;
    CUDA_CHECK(hipMemcpy(&h_total, d_total, sizeof(int), hipMemcpyDeviceToHost));

    printf("elements: %d\n", N);
    printf("gpu sum: %d\n", h_total);
    printf("cpu sum: %lld\n", expected);
    printf("result: %s\n", (long long)h_total == expected ? "PASS" : "FAIL");

    CUDA_CHECK(hipFree(d_in));
    CUDA_CHECK(hipFree(d_total));
    free(h_in);
    return (long long)h_total == expected ? 0 : 1;
}
