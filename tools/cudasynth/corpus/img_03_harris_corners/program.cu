// Feature extraction from 128x128 images: Harris corner detection, focused
// on exact integer arithmetic and warp-aggregated output. Pipeline:
//   1. Sobel gradients Ix, Iy (int);
//   2. structure tensor sums over a 5x5 window (int64), Harris response
//      R = det - k * trace^2 with k = 1/25, evaluated exactly as
//      25 * det - trace^2 in 64-bit integers;
//   3. threshold + 3x3 non-maximum suppression; each warp counts its corners
//      with __ballot_sync and adds the count with one atomicAdd.
// Four images (one per grid z-slice) are processed in one launch.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e = (call);                                               \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error: %s (%s:%d)\n", cudaGetErrorString(e), \
                    __FILE__, __LINE__);                                      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define IMG 128
#define NUM_IMAGES 4
#define WIN 2  // 5x5 window
#define THRESHOLD 400000000000LL

__global__ void gradients(const unsigned char* img, int* Ix, int* Iy) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int base = blockIdx.z * IMG * IMG;
    if (x >= IMG || y >= IMG) return;
    int gx = 0, gy = 0;
    if (x > 0 && y > 0 && x < IMG - 1 && y < IMG - 1) {
        const unsigned char* p = img + base;
        gx = (p[(y - 1) * IMG + x + 1] + 2 * p[y * IMG + x + 1] + p[(y + 1) * IMG + x + 1]) -
             (p[(y - 1) * IMG + x - 1] + 2 * p[y * IMG + x - 1] + p[(y + 1) * IMG + x - 1]);
        gy = (p[(y + 1) * IMG + x - 1] + 2 * p[(y + 1) * IMG + x] + p[(y + 1) * IMG + x + 1]) -
             (p[(y - 1) * IMG + x - 1] + 2 * p[(y - 1) * IMG + x] + p[(y - 1) * IMG + x + 1]);
    }
    Ix[base + y * IMG + x] = gx;
    Iy[base + y * IMG + x] = gy;
}

__global__ void harrisResponse(const int* Ix, const int* Iy, long long* R) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int base = blockIdx.z * IMG * IMG;
    if (x >= IMG || y >= IMG) return;
    long long sxx = 0, syy = 0, sxy = 0;
    for (int dy = -WIN; dy <= WIN; ++dy)
        for (int dx = -WIN; dx <= WIN; ++dx) {
            const int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= IMG || yy >= IMG) continue;
            const long long gx = Ix[base + yy * IMG + xx], gy = Iy[base + yy * IMG + xx];
            sxx += gx * gx;
            syy += gy * gy;
            sxy += gx * gy;
        }
    const long long trace = sxx + syy;
    R[base + y * IMG + x] = 25 * (sxx * syy - sxy * sxy) - trace * trace;
}

__global__ void detectCorners(const long long* R, unsigned char* isCorner, int* counts) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int base = blockIdx.z * IMG * IMG;
    bool corner = false;
    if (x > 0 && y > 0 && x < IMG - 1 && y < IMG - 1) {
        const long long r = R[base + y * IMG + x];
        corner = r > THRESHOLD;
        // Strict maximum over the 3x3 neighbourhood; ties go to the lower index.
        for (int dy = -1; dy <= 1 && corner; ++dy)
            for (int dx = -1; dx <= 1 && corner; ++dx) {
                if (dx == 0 && dy == 0) continue;
                const long long q = R[base + (y + dy) * IMG + x + dx];
                const bool earlier = dy < 0 || (dy == 0 && dx < 0);
                if (q > r || (q == r && earlier)) corner = false;
            }
    }
    if (x < IMG && y < IMG) isCorner[base + y * IMG + x] = corner ? 1 : 0;
    // blockDim.x == 32: each row of the block is one full warp.
    const unsigned int votes = __ballot_sync(0xffffffffu, corner);
    if (threadIdx.x == 0 && votes) atomicAdd(&counts[blockIdx.z], __popc(votes));
}

int main() {
    const int pixels = IMG * IMG * NUM_IMAGES;
    std::vector<unsigned char> img(pixels);
    // Image i: (i + 2) axis-aligned rectangles of different brightness on a dark background.
    for (int i = 0; i < NUM_IMAGES; ++i) {
        unsigned char* p = &img[i * IMG * IMG];
        for (int k = 0; k < IMG * IMG; ++k) p[k] = 20;
        for (int r = 0; r < i + 2; ++r) {
            const int x0 = 10 + (r * 37 + i * 11) % 70, y0 = 8 + (r * 23 + i * 17) % 70;
            const int w = 20 + (r * 13) % 25, h = 18 + (r * 7 + i) % 25;
            for (int y = y0; y < y0 + h && y < IMG; ++y)
                for (int x = x0; x < x0 + w && x < IMG; ++x) p[y * IMG + x] = (unsigned char)(120 + 40 * r % 130);
        }
    }

    unsigned char *dImg, *dCorner;
    int *dIx, *dIy, *dCounts;
    long long* dR;
    CUDA_CHECK(cudaMalloc(&dImg, pixels));
    CUDA_CHECK(cudaMalloc(&dCorner, pixels));
    CUDA_CHECK(cudaMalloc(&dIx, pixels * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dIy, pixels * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dR, pixels * sizeof(long long)));
    CUDA_CHECK(cudaMalloc(&dCounts, NUM_IMAGES * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dImg, img.data(), pixels, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dCounts, 0, NUM_IMAGES * sizeof(int)));

    const dim3 block(32, 8);
    const dim3 grid(IMG / 32, IMG / 8, NUM_IMAGES);
    gradients<<<grid, block>>>(dImg, dIx, dIy);
    harrisResponse<<<grid, block>>>(dIx, dIy, dR);
    detectCorners<<<grid, block>>>(dR, dCorner, dCounts);
    CUDA_CHECK(cudaGetLastError());

    std::vector<unsigned char> corner(pixels);
    int counts[NUM_IMAGES];
    CUDA_CHECK(cudaMemcpy(corner.data(), dCorner, pixels, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(counts, dCounts, sizeof(counts), cudaMemcpyDeviceToHost));

    bool consistent = true;
    for (int i = 0; i < NUM_IMAGES; ++i) {
        int listed = 0;
        printf("image %d: %d corners, first:", i, counts[i]);
        for (int k = 0; k < IMG * IMG; ++k)
            if (corner[i * IMG * IMG + k]) {
                if (listed < 4) printf(" (%d,%d)", k % IMG, k / IMG);
                ++listed;
            }
        printf("\n");
        consistent = consistent && listed == counts[i];
    }
    printf("ballot counts match corner map: %s\n", consistent ? "yes" : "no");

    cudaFree(dImg); cudaFree(dCorner); cudaFree(dIx); cudaFree(dIy); cudaFree(dR); cudaFree(dCounts);
    return consistent ? 0 : 1;
}
