// Image filtering with a 7x7 Gaussian filter on a 512x512 8-bit image,
// optimized for memory bandwidth: the filter is separable, so it runs as a
// horizontal and a vertical 7-tap pass (14 instead of 49 multiply-adds per
// pixel). Each pass stages a tile plus its apron in shared memory; the
// binomial taps (1 6 15 20 15 6 1) are integers in __constant__ memory and
// all arithmetic is integer, so the result is exact: out = (sum + 2048) >> 12.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t status = (call);                                          \
        if (status != cudaSuccess) {                                          \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(status), __FILE__, __LINE__);          \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define IMG_W 512
#define IMG_H 512
#define RADIUS 3
#define TAPS (2 * RADIUS + 1)
#define TILE_X 32
#define TILE_Y 8

__constant__ int cTaps[TAPS];

__host__ __device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Horizontal pass: tmp = sum_k taps[k] * in[y][x + k - R] (clamp-to-edge), unnormalized.
__global__ void blurRows(const unsigned char* __restrict__ in, int* __restrict__ tmp, int w, int h) {
    __shared__ int s[TILE_Y][TILE_X + 2 * RADIUS];
    const int x = blockIdx.x * TILE_X + threadIdx.x;
    const int y = blockIdx.y * TILE_Y + threadIdx.y;
    const int yc = clampi(y, 0, h - 1);
    s[threadIdx.y][threadIdx.x + RADIUS] = in[yc * w + clampi(x, 0, w - 1)];
    if (threadIdx.x < RADIUS) {
        s[threadIdx.y][threadIdx.x] = in[yc * w + clampi(x - RADIUS, 0, w - 1)];
        s[threadIdx.y][threadIdx.x + TILE_X + RADIUS] = in[yc * w + clampi(x + TILE_X, 0, w - 1)];
    }
    __syncthreads();
    if (x >= w || y >= h) return;
    int acc = 0;
#pragma unroll
    for (int k = 0; k < TAPS; ++k) acc += cTaps[k] * s[threadIdx.y][threadIdx.x + k];
    tmp[y * w + x] = acc;
}

// Vertical pass over the row results, then normalization by 64*64 with rounding.
__global__ void blurCols(const int* __restrict__ tmp, unsigned char* __restrict__ out, int w, int h) {
    __shared__ int s[TILE_Y + 2 * RADIUS][TILE_X];
    const int x = blockIdx.x * TILE_X + threadIdx.x;
    const int y = blockIdx.y * TILE_Y + threadIdx.y;
    const int xc = clampi(x, 0, w - 1);
    s[threadIdx.y + RADIUS][threadIdx.x] = tmp[clampi(y, 0, h - 1) * w + xc];
    if (threadIdx.y < RADIUS) {
        s[threadIdx.y][threadIdx.x] = tmp[clampi(y - RADIUS, 0, h - 1) * w + xc];
        s[threadIdx.y + TILE_Y + RADIUS][threadIdx.x] = tmp[clampi(y + TILE_Y, 0, h - 1) * w + xc];
    }
    __syncthreads();
    if (x >= w || y >= h) return;
    int acc = 0;
#pragma unroll
    for (int k = 0; k < TAPS; ++k) acc += cTaps[k] * s[threadIdx.y + k][threadIdx.x];
    out[y * w + x] = (unsigned char)((acc + 2048) >> 12);
}

int main() {
    const int taps[TAPS] = {1, 6, 15, 20, 15, 6, 1};
    std::vector<unsigned char> img(IMG_W * IMG_H), out(IMG_W * IMG_H);
    for (int y = 0; y < IMG_H; ++y)
        for (int x = 0; x < IMG_W; ++x) {
            // Checkerboard of 16x16 squares plus a diagonal ramp and hash noise.
            const int checker = (((x / 16) + (y / 16)) & 1) ? 200 : 40;
            const unsigned int n = (unsigned int)(x * 73856093u ^ y * 19349663u);
            img[y * IMG_W + x] = (unsigned char)clampi(checker + (x + y) / 32 + (int)(n % 31) - 15, 0, 255);
        }

    unsigned char *dIn, *dOut;
    int* dTmp;
    CUDA_CHECK(cudaMalloc(&dIn, IMG_W * IMG_H));
    CUDA_CHECK(cudaMalloc(&dOut, IMG_W * IMG_H));
    CUDA_CHECK(cudaMalloc(&dTmp, IMG_W * IMG_H * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dIn, img.data(), IMG_W * IMG_H, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpyToSymbol(cTaps, taps, sizeof(taps)));

    dim3 block(TILE_X, TILE_Y);
    dim3 grid((IMG_W + TILE_X - 1) / TILE_X, (IMG_H + TILE_Y - 1) / TILE_Y);
    blurRows<<<grid, block>>>(dIn, dTmp, IMG_W, IMG_H);
    blurCols<<<grid, block>>>(dTmp, dOut, IMG_W, IMG_H);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dOut, IMG_W * IMG_H, cudaMemcpyDeviceToHost));

    // Direct 2D reference with the outer-product kernel.
    int mismatches = 0;
    unsigned long long checksum = 0;
    for (int y = 0; y < IMG_H; ++y)
        for (int x = 0; x < IMG_W; ++x) {
            int acc = 0;
            for (int ky = 0; ky < TAPS; ++ky)
                for (int kx = 0; kx < TAPS; ++kx)
                    acc += taps[ky] * taps[kx] *
                           img[clampi(y + ky - RADIUS, 0, IMG_H - 1) * IMG_W + clampi(x + kx - RADIUS, 0, IMG_W - 1)];
            if ((unsigned char)((acc + 2048) >> 12) != out[y * IMG_W + x]) ++mismatches;
            checksum = checksum * 31 + out[y * IMG_W + x];
        }

    printf("image %dx%d, gaussian %dx%d (separable)\n", IMG_W, IMG_H, TAPS, TAPS);
    printf("in(8,8)=%d out(8,8)=%d in(16,16)=%d out(16,16)=%d out(511,511)=%d\n", img[8 * IMG_W + 8],
           out[8 * IMG_W + 8], img[16 * IMG_W + 16], out[16 * IMG_W + 16], out[IMG_W * IMG_H - 1]);
    printf("checksum=%llu\n", checksum);
    printf("matches direct 2D filter: %s\n", mismatches == 0 ? "yes" : "no");

    cudaFree(dIn);
    cudaFree(dOut);
    cudaFree(dTmp);
    return mismatches == 0 ? 0 : 1;
}
