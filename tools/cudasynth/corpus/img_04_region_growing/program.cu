// Image segmentation using seeded region growing on a 256x256 image,
// optimized for simple host/device coordination with unified memory: the
// image, the label maps and the convergence flag live in cudaMallocManaged
// memory. Each iteration is a synchronous (Jacobi-style) sweep on a 2D grid:
// an unlabeled pixel joins the smallest-numbered neighbouring region whose
// seed intensity is within the tolerance. Reading the old label map and
// writing a new one makes the result independent of thread scheduling.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err = (call);                                              \
        if (err != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                       \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

#define W 256
#define H 256
#define NUM_SEEDS 5
#define TOLERANCE 24
#define UNLABELED 0

__constant__ int cSeedIntensity[NUM_SEEDS + 1];  // index = label (1..NUM_SEEDS)

__global__ void growStep(const unsigned char* img, const int* labels, int* next, int* changed) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    const int idx = y * W + x;
    int label = labels[idx];
    if (label == UNLABELED) {
        const int v = img[idx];
        int best = UNLABELED;
        const int nx[4] = {x - 1, x + 1, x, x};
        const int ny[4] = {y, y, y - 1, y + 1};
        for (int k = 0; k < 4; ++k) {
            if (nx[k] < 0 || ny[k] < 0 || nx[k] >= W || ny[k] >= H) continue;
            const int l = labels[ny[k] * W + nx[k]];
            if (l != UNLABELED && abs(v - cSeedIntensity[l]) <= TOLERANCE && (best == UNLABELED || l < best)) best = l;
        }
        if (best != UNLABELED) {
            label = best;
            *changed = 1;
        }
    }
    next[idx] = label;
}

int main() {
    unsigned char* img;
    int *labels, *next, *changed;
    CUDA_CHECK(cudaMallocManaged(&img, W * H));
    CUDA_CHECK(cudaMallocManaged(&labels, W * H * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&next, W * H * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&changed, sizeof(int)));

    // Background ~30 with texture, four blobs of different brightness, and a
    // bright ring that touches the second blob.
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            int v = 30 + ((x * 7 + y * 13) % 9);
            const int dx1 = x - 60, dy1 = y - 60, dx2 = x - 180, dy2 = y - 70, dx3 = x - 90, dy3 = y - 190;
            if (dx1 * dx1 + dy1 * dy1 < 40 * 40) v = 100 + (x + y) % 11;
            if (dx2 * dx2 + 2 * dy2 * dy2 < 45 * 45) v = 160 + (x * 3) % 13;
            if (abs(dx3) < 50 && abs(dy3) < 30) v = 220 + (y % 7);
            const int r2 = (x - 200) * (x - 200) + (y - 200) * (y - 200);
            if (r2 > 30 * 30 && r2 < 40 * 40) v = 165;
            img[y * W + x] = (unsigned char)v;
        }
    const int seedX[NUM_SEEDS] = {5, 60, 180, 90, 200};
    const int seedY[NUM_SEEDS] = {5, 60, 70, 190, 165};
    int seedIntensity[NUM_SEEDS + 1] = {0};
    for (int i = 0; i < W * H; ++i) labels[i] = UNLABELED;
    for (int s = 0; s < NUM_SEEDS; ++s) {
        labels[seedY[s] * W + seedX[s]] = s + 1;
        seedIntensity[s + 1] = img[seedY[s] * W + seedX[s]];
    }
    CUDA_CHECK(cudaMemcpyToSymbol(cSeedIntensity, seedIntensity, sizeof(seedIntensity)));

    const dim3 block(16, 16), grid(W / 16, H / 16);
    int iterations = 0;
    do {
        *changed = 0;
        growStep<<<grid, block>>>(img, labels, next, changed);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        int* t = labels;
        labels = next;
        next = t;
        ++iterations;
    } while (*changed && iterations < 2 * (W + H));

    int sizes[NUM_SEEDS + 1] = {0};
    for (int i = 0; i < W * H; ++i) sizes[labels[i]]++;
    printf("image %dx%d, %d seeds, tolerance %d\n", W, H, NUM_SEEDS, TOLERANCE);
    printf("converged after %d sweeps\n", iterations);
    for (int s = 1; s <= NUM_SEEDS; ++s)
        printf("region %d: seed (%d,%d) intensity %d -> %d pixels\n", s, seedX[s - 1], seedY[s - 1], seedIntensity[s],
               sizes[s]);
    printf("unlabeled pixels: %d\n", sizes[UNLABELED]);

    CUDA_CHECK(cudaFree(img));
    CUDA_CHECK(cudaFree(labels));
    CUDA_CHECK(cudaFree(next));
    CUDA_CHECK(cudaFree(changed));
    return 0;
}
