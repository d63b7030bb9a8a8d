// 2D convolution with a 7x7 filter, focused on shared memory optimization.
// The filter sits in __constant__ memory (uploaded with cudaMemcpyToSymbol).
// Each 16x16 block loads a (16+6)x(16+6) input tile with halo into
// dynamically sized shared memory, so the tile size can change at launch.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t status = (call);                                            \
        if (status != cudaSuccess) {                                            \
            fprintf(stderr, "CUDA error: %s (%s:%d)\n",                         \
                    cudaGetErrorString(status), __FILE__, __LINE__);            \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define FILTER_SIZE 7
#define FILTER_RADIUS (FILTER_SIZE / 2)
#define BLOCK_DIM 16

__constant__ float d_filter[FILTER_SIZE * FILTER_SIZE];

__global__ void conv2dShared(const float* __restrict__ input, float* __restrict__ output,
                             int width, int height) {
    extern __shared__ float tile[];
    const int tileW = blockDim.x + 2 * FILTER_RADIUS;
    const int tileH = blockDim.y + 2 * FILTER_RADIUS;

    const int outX = blockIdx.x * blockDim.x + threadIdx.x;
    const int outY = blockIdx.y * blockDim.y + threadIdx.y;
    const int originX = blockIdx.x * blockDim.x - FILTER_RADIUS;
    const int originY = blockIdx.y * blockDim.y - FILTER_RADIUS;

    // Cooperative load of the tile and its halo (zero padding outside the image).
    for (int ty = threadIdx.y; ty < tileH; ty += blockDim.y) {
        for (int tx = threadIdx.x; tx < tileW; tx += blockDim.x) {
            const int gx = originX + tx;
            const int gy = originY + ty;
            float v = 0.0f;
            if (gx >= 0 && gx < width && gy >= 0 && gy < height) v = input[gy * width + gx];
            tile[ty * tileW + tx] = v;
        }
    }
    __syncthreads();

    if (outX < width && outY < height) {
        float sum = 0.0f;
#pragma unroll
        for (int fy = 0; fy < FILTER_SIZE; ++fy)
#pragma unroll
            for (int fx = 0; fx < FILTER_SIZE; ++fx)
                sum += d_filter[fy * FILTER_SIZE + fx] *
                       tile[(threadIdx.y + fy) * tileW + (threadIdx.x + fx)];
        output[outY * width + outX] = sum;
    }
}

int main() {
    const int width = 256, height = 200;
    const size_t pixels = (size_t)width * height;

    float* hIn = (float*)malloc(pixels * sizeof(float));
    float* hOut = (float*)malloc(pixels * sizeof(float));
    float hFilter[FILTER_SIZE * FILTER_SIZE];

    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) hIn[y * width + x] = (float)((x * 7 + y * 3) % 16);
    for (int i = 0; i < FILTER_SIZE * FILTER_SIZE; ++i) hFilter[i] = (float)((i * 5) % 7 - 3);

    float *dIn, *dOut;
    CUDA_CHECK(cudaMalloc(&dIn, pixels * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, pixels * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, hIn, pixels * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(d_filter, hFilter, sizeof(hFilter)));

    dim3 block(BLOCK_DIM, BLOCK_DIM);
    dim3 grid((width + BLOCK_DIM - 1) / BLOCK_DIM, (height + BLOCK_DIM - 1) / BLOCK_DIM);
    const size_t shmem = (BLOCK_DIM + 2 * FILTER_RADIUS) * (BLOCK_DIM + 2 * FILTER_RADIUS) * sizeof(float);
    conv2dShared<<<grid, block, shmem>>>(dIn, dOut, width, height);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hOut, dOut, pixels * sizeof(float), cudaMemcpyDeviceToHost));

    // CPU reference; all values are small integers so results are exact.
    long long checksum = 0;
    int mismatches = 0;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            float ref = 0.0f;
            for (int fy = 0; fy < FILTER_SIZE; ++fy)
                for (int fx = 0; fx < FILTER_SIZE; ++fx) {
                    const int ix = x + fx - FILTER_RADIUS, iy = y + fy - FILTER_RADIUS;
                    if (ix >= 0 && ix < width && iy >= 0 && iy < height)
                        ref += hFilter[fy * FILTER_SIZE + fx] * hIn[iy * width + ix];
                }
            if (ref != hOut[y * width + x]) ++mismatches;
            checksum += (long long)hOut[y * width + x];
        }
    }

    printf("image %dx%d, filter %dx%d\n", width, height, FILTER_SIZE, FILTER_SIZE);
    printf("out(0,0)=%.1f out(100,50)=%.1f out(255,199)=%.1f\n", hOut[0], hOut[50 * width + 100],
           hOut[pixels - 1]);
    printf("checksum=%lld mismatches=%d\n", checksum, mismatches);

    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dOut));
    free(hIn);
    free(hOut);
    return mismatches == 0 ? 0 : 1;
}
