// Abelian sandpile (Bak-Tang-Wiesenfeld) on a 128x128 grid with open
// boundaries: grains falling off the edge are lost. A random stable
// background (heights 0-3) gets 6000 extra grains at the centre and 1500 at
// an off-centre site, then relaxes with synchronous multi-toppling: every
// site with h >= 4 topples h/4 times at once, double-buffered on a 2D grid.
// A warp's "still unstable" vote (__ballot_sync) records the step with one
// atomicMax per warp; the host launches steps in batches of 64 and stops
// after a batch whose last step left the grid stable. Per-site toppling
// counts (the odometer) are accumulated. By the abelian property the final heights and the odometer
// do not depend on the toppling order, so the host checks them with a
// sequential stack-based relaxation.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                             \
    do {                                                                             \
        cudaError_t e = (call);                                                      \
        if (e != cudaSuccess) {                                                      \
            fprintf(stderr, "CUDA error: %s at %s:%d\n", cudaGetErrorString(e),      \
                    __FILE__, __LINE__);                                             \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

const int W = 128, H = 128;
const int CENTER_GRAINS = 6000, SIDE_GRAINS = 1500;
const int BATCH = 64;

__device__ __forceinline__ int topplesAt(const int* h, int x, int y) {
    return (x < 0 || y < 0 || x >= W || y >= H) ? 0 : h[y * W + x] / 4;
}

__global__ void toppleStep(const int* cur, int* next, unsigned* odometer, int step, int* lastUnstable) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int t = topplesAt(cur, x, y);
    const int h = cur[y * W + x] - 4 * t + topplesAt(cur, x - 1, y) + topplesAt(cur, x + 1, y) +
                  topplesAt(cur, x, y - 1) + topplesAt(cur, x, y + 1);
    next[y * W + x] = h;
    odometer[y * W + x] += t;
    const unsigned vote = __ballot_sync(0xffffffffu, h >= 4);
    const int lane = (threadIdx.y * blockDim.x + threadIdx.x) & 31;
    if (lane == 0 && vote != 0) atomicMax(lastUnstable, step);
}

int main() {
    std::vector<int> height(W * H);
    unsigned s = 8675309u;
    for (int i = 0; i < W * H; ++i) height[i] = (int)(((s = s * 1664525u + 1013904223u) >> 16) & 3u);
    const int cx = W / 2, cy = H / 2, sx = 30, sy = 90;
    height[cy * W + cx] += CENTER_GRAINS;
    height[sy * W + sx] += SIDE_GRAINS;
    long long grainsBefore = 0;
    for (int v : height) grainsBefore += v;

    int *dA, *dB, *dLast;
    unsigned* dOdo;
    CUDA_CHECK(cudaMalloc(&dA, W * H * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dB, W * H * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dOdo, W * H * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&dLast, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dA, height.data(), W * H * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dOdo, 0, W * H * sizeof(unsigned)));
    const dim3 block(32, 8), grid(W / 32, H / 8);
    const int none = -1;
    CUDA_CHECK(cudaMemcpy(dLast, &none, sizeof(int), cudaMemcpyHostToDevice));
    int launched = 0, last = -1;
    do {  // a step on a stable grid changes nothing, so whole batches are safe
        for (int b = 0; b < BATCH; ++b, ++launched) {
            toppleStep<<<grid, block>>>(dA, dB, dOdo, launched, dLast);
            std::swap(dA, dB);
        }
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(&last, dLast, sizeof(int), cudaMemcpyDeviceToHost));
    } while (last == launched - 1 && launched < 1000000);
    const int iterations = last + 2;  // steps that toppled something (the initial grid is unstable)
    fprintf(stderr, "launched %d steps\n", launched);
    std::vector<int> gpu(W * H);
    std::vector<unsigned> odo(W * H);
    CUDA_CHECK(cudaMemcpy(gpu.data(), dA, W * H * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(odo.data(), dOdo, W * H * sizeof(unsigned), cudaMemcpyDeviceToHost));

    // CPU reference: sequential relaxation from a stack of unstable sites.
    std::vector<int> ref(height);
    std::vector<unsigned> refOdo(W * H, 0);
    std::vector<int> stack;
    for (int i = 0; i < W * H; ++i)
        if (ref[i] >= 4) stack.push_back(i);
    while (!stack.empty()) {
        const int i = stack.back();
        stack.pop_back();
        const int t = ref[i] / 4;
        if (t == 0) continue;
        ref[i] -= 4 * t;
        refOdo[i] += t;
        const int x = i % W, y = i / W;
        const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
        for (int k = 0; k < 4; ++k) {
            if (nx[k] < 0 || ny[k] < 0 || nx[k] >= W || ny[k] >= H) continue;
            const int j = ny[k] * W + nx[k];
            ref[j] += t;
            if (ref[j] >= 4 && ref[j] - t < 4) stack.push_back(j);
        }
    }
    int mismatches = 0, counts[4] = {0, 0, 0, 0}, maxSite = 0;
    long long grainsAfter = 0;
    unsigned long long topplings = 0;
    for (int i = 0; i < W * H; ++i) {
        if (gpu[i] != ref[i] || odo[i] != refOdo[i]) ++mismatches;
        if (gpu[i] >= 0 && gpu[i] < 4) counts[gpu[i]]++;
        grainsAfter += gpu[i];
        topplings += odo[i];
        if (odo[i] > odo[maxSite]) maxSite = i;
    }
    printf("grid=%dx%d grains added=%d+%d synchronous iterations=%d\n", W, H, CENTER_GRAINS, SIDE_GRAINS, iterations);
    printf("grains before=%lld after=%lld lost at the edges=%lld\n", grainsBefore, grainsAfter, grainsBefore - grainsAfter);
    printf("final heights 0/1/2/3: %d %d %d %d\n", counts[0], counts[1], counts[2], counts[3]);
    printf("total topplings=%llu max at (%d,%d)=%u\n", topplings, maxSite % W, maxSite / W, odo[maxSite]);
    printf("sites differing from sequential relaxation=%d\n", mismatches);
    CUDA_CHECK(cudaFree(dA)); CUDA_CHECK(cudaFree(dB)); CUDA_CHECK(cudaFree(dOdo)); CUDA_CHECK(cudaFree(dLast));
    return mismatches == 0 ? 0 : 1;
}
