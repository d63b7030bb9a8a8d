// Collatz total stopping times for every n in [1, 2^19]. A grid-stride loop
// iterates each trajectory in 64-bit integers; per-thread maxima (steps and
// trajectory peak, packed with the starting value so that ties go to the
// smallest n) are combined with __shfl_xor_sync butterflies and one 64-bit
// atomicMax per warp. A shared-memory histogram of stopping times (buckets
// of 32 steps) is merged into global memory with integer atomicAdd.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define gpuErrchk(ans) gpuAssert((ans), __FILE__, __LINE__)
inline void gpuAssert(cudaError_t code, const char* file, int line) {
    if (code != cudaSuccess) {
        fprintf(stderr, "GPUassert: %s %s %d\n", cudaGetErrorString(code), file, line);
        exit(code);
    }
}

typedef unsigned long long u64;
const unsigned LIMIT = 1u << 19;
const int BUCKETS = 17;  // the last bucket takes every stopping time from 512 up
const int BUCKET_WIDTH = 32;

__device__ __host__ inline unsigned stoppingTime(u64 n, u64* peak) {
    unsigned steps = 0;
    u64 top = n;
    while (n != 1) {
        n = (n & 1) ? 3 * n + 1 : n >> 1;
        if (n > top) top = n;
        ++steps;
    }
    *peak = top;
    return steps;
}

// pack orders by value first, then by the smaller starting number.
__device__ __host__ inline u64 pack(u64 value, unsigned n) { return (value << 21) | (u64)(LIMIT - n); }

__device__ u64 warpMax(u64 v) {
    for (int mask = 16; mask > 0; mask >>= 1) {
        const u64 other = __shfl_xor_sync(0xffffffffu, v, mask);
        v = other > v ? other : v;
    }
    return v;
}

__global__ void collatzKernel(unsigned limit, u64* bestSteps, u64* bestPeak, u64* totalSteps, unsigned* hist) {
    __shared__ unsigned localHist[BUCKETS];
    for (int b = threadIdx.x; b < BUCKETS; b += blockDim.x) localHist[b] = 0;
    __syncthreads();
    u64 mySteps = 0, myPeak = 0, mySum = 0;
    for (unsigned n = blockIdx.x * blockDim.x + threadIdx.x + 1; n <= limit; n += blockDim.x * gridDim.x) {
        u64 peak;
        const unsigned steps = stoppingTime(n, &peak);
        mySum += steps;
        atomicAdd(&localHist[min(steps / BUCKET_WIDTH, (unsigned)BUCKETS - 1)], 1u);
        const u64 s = pack(steps, n), p = pack(peak, n);
        if (s > mySteps) mySteps = s;
        if (p > myPeak) myPeak = p;
    }
    mySteps = warpMax(mySteps);
    myPeak = warpMax(myPeak);
    if ((threadIdx.x & 31) == 0) {
        atomicMax(bestSteps, mySteps);
        atomicMax(bestPeak, myPeak);
    }
    atomicAdd(totalSteps, mySum);
    __syncthreads();
    for (int b = threadIdx.x; b < BUCKETS; b += blockDim.x) atomicAdd(&hist[b], localHist[b]);
}

int main() {
    u64* dResults;  // bestSteps, bestPeak, totalSteps
    unsigned* dHist;
    gpuErrchk(cudaMalloc(&dResults, 3 * sizeof(u64)));
    gpuErrchk(cudaMalloc(&dHist, BUCKETS * sizeof(unsigned)));
    gpuErrchk(cudaMemset(dResults, 0, 3 * sizeof(u64)));
    gpuErrchk(cudaMemset(dHist, 0, BUCKETS * sizeof(unsigned)));
    collatzKernel<<<128, 256>>>(LIMIT, dResults, dResults + 1, dResults + 2, dHist);
    gpuErrchk(cudaGetLastError());
    gpuErrchk(cudaDeviceSynchronize());
    u64 res[3];
    unsigned hist[BUCKETS];
    gpuErrchk(cudaMemcpy(res, dResults, sizeof(res), cudaMemcpyDeviceToHost));
    gpuErrchk(cudaMemcpy(hist, dHist, sizeof(hist), cudaMemcpyDeviceToHost));

    // CPU reference.
    u64 refSteps = 0, refPeak = 0, refTotal = 0;
    std::vector<unsigned> refHist(BUCKETS, 0);
    for (unsigned n = 1; n <= LIMIT; ++n) {
        u64 peak;
        const unsigned steps = stoppingTime(n, &peak);
        refTotal += steps;
        refHist[steps / BUCKET_WIDTH < (unsigned)BUCKETS ? steps / BUCKET_WIDTH : BUCKETS - 1]++;
        if (pack(steps, n) > refSteps) refSteps = pack(steps, n);
        if (pack(peak, n) > refPeak) refPeak = pack(peak, n);
    }
    bool ok = res[0] == refSteps && res[1] == refPeak && res[2] == refTotal;
    for (int b = 0; b < BUCKETS; ++b) ok = ok && hist[b] == refHist[b];

    const unsigned mask = (1u << 21) - 1;
    printf("n in [1, %u]\n", LIMIT);
    printf("longest: n=%u steps=%llu\n", LIMIT - (unsigned)(res[0] & mask), res[0] >> 21);
    printf("highest peak: n=%u peak=%llu\n", LIMIT - (unsigned)(res[1] & mask), res[1] >> 21);
    printf("total steps=%llu mean=%.3f\n", res[2], (double)res[2] / LIMIT);
    printf("histogram (32-step buckets):");
    for (int b = 0; b < BUCKETS; ++b) printf(" %u", hist[b]);
    printf("\n");
    printf("CPU check: %s\n", ok ? "PASS" : "FAIL");
    gpuErrchk(cudaFree(dResults));
    gpuErrchk(cudaFree(dHist));
    return ok ? 0 : 1;
}
