// Tiled matrix multiply: a templated kernel, launch bounds, cache config and occupancy.
#include <cstdio>
#include <hip/hip_runtime.h>

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
matmul(const T* A, const T* B, T* C, int N) {
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    T acc = 0;
    for (int t = 0; t < (N + TILE - 1) / TILE; ++t) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < N && ac < N) ? A[row * N + ac] : T(0);
        Bs[threadIdx.y][threadIdx.x] = (br < N && col < N) ? B[br * N + col] : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < N && col < N) C[row * N + col] = acc;
}

int main() {
    const int N = 96;
    const int TILE = 16;
    float *A, *B, *C;
    size_t bytes = N * N * sizeof(float);
    float* h = new float[N * N];
    for (int i = 0; i < N * N; ++i) h[i] = (float)((i % 7) - 3);
    hipMalloc(&A, bytes);
    hipMalloc(&B, bytes);
    hipMalloc(&C, bytes);
    hipMemcpy(A, h, bytes, hipMemcpyHostToDevice);
    hipMemcpy(B, h, bytes, hipMemcpyHostToDevice);
    hipFuncSetCacheConfig(reinterpret_cast<const void*>(matmul<float, TILE>), hipFuncCachePreferShared);
    int activeBlocks = 0;
    hipOccupancyMaxActiveBlocksPerMultiprocessor(&activeBlocks, matmul<float, TILE>, TILE * TILE, 0);
    hipFuncAttributes attr;
    hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(matmul<float, TILE>));
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    matmul<float, TILE><<<grid, block>>>(A, B, C, N);
    hipMemcpy(h, C, bytes, hipMemcpyDeviceToHost);
    double trace = 0;
    for (int i = 0; i < N; ++i) trace += h[i * N + i];
    printf("trace=%.1f occupancy=%s maxThreads=%d\n", trace, activeBlocks > 0 ? "ok" : "none",
           attr.maxThreadsPerBlock);
    hipFree(A); hipFree(B); hipFree(C);
    delete[] h;
    return 0;
}
