// HIP port of ds_01_radix_sort_lsd4/program.cu (cassbench reference translation).
//
// Least-significant-digit radix sort of 65536 (key, index) pairs with 4-bit
// digits: 8 passes of three kernels. tileHistogram counts digits per 256-key
// tile in shared memory, scanHistogram turns the digit-major count table into
// global offsets (one block, Hillis-Steele over per-thread partials), and
// tileScatter sorts each tile by the digit with four stable 1-bit splits in
// shared memory before writing every pair to its global position. Stability
// is checked against std::stable_sort through the carried indices.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <hip/hip_runtime.h>

#define HIP_CHECK(expr)                                                                            \
    do {                                                                                           \
        hipError_t rc = (expr);                                                                    \
        if (rc != hipSuccess) {                                                                    \
            fprintf(stderr, "%s failed at line %d: %s\n", #expr, __LINE__, hipGetErrorString(rc)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

const int N = 65536;
const int TILE = 256;  // one key per thread
const int NUM_TILES = N / TILE;
const int DIGIT_BITS = 4;
const int RADIX = 1 << DIGIT_BITS;
const int SCAN_THREADS = RADIX * NUM_TILES / 4;

template <int BITS>
__device__ __forceinline__ unsigned digitOf(unsigned key, int shift) {
    return (key >> shift) & ((1u << BITS) - 1u);
}

template <int BITS>
__global__ void tileHistogram(const unsigned* keys, unsigned* hist, int shift) {
    __shared__ unsigned counts[1 << BITS];
    if (threadIdx.x < (1 << BITS)) counts[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&counts[digitOf<BITS>(keys[blockIdx.x * TILE + threadIdx.x], shift)], 1u);
    __syncthreads();
    if (threadIdx.x < (1 << BITS)) hist[threadIdx.x * gridDim.x + blockIdx.x] = counts[threadIdx.x];
}

// Exclusive scan of 4*blockDim.x counts in place.
__global__ void scanHistogram(unsigned* hist) {
    __shared__ unsigned partial[2][SCAN_THREADS];
    const int t = threadIdx.x;
    unsigned v[4], s = 0;
    for (int k = 0; k < 4; ++k) {
        v[k] = hist[4 * t + k];
        s += v[k];
    }
    int cur = 0;
    partial[0][t] = s;
    __syncthreads();
    for (int off = 1; off < (int)blockDim.x; off <<= 1) {
        partial[1 - cur][t] = partial[cur][t] + (t >= off ? partial[cur][t - off] : 0u);
        cur = 1 - cur;
        __syncthreads();
    }
    unsigned run = partial[cur][t] - s;
    for (int k = 0; k < 4; ++k) {
        hist[4 * t + k] = run;
        run += v[k];
    }
}

template <int BITS>
__global__ void tileScatter(const unsigned* keysIn, const unsigned* valsIn, unsigned* keysOut, unsigned* valsOut,
                            const unsigned* offsets, int shift) {
    __shared__ unsigned sKeys[TILE], sVals[TILE], zeros[TILE];
    __shared__ unsigned digitStart[1 << BITS];
    const unsigned t = threadIdx.x;
    unsigned key = keysIn[blockIdx.x * TILE + t], val = valsIn[blockIdx.x * TILE + t];
    for (int b = 0; b < BITS; ++b) {  // stable split on bit shift+b
        const unsigned bit = (key >> (shift + b)) & 1u;
        zeros[t] = 1u - bit;
        __syncthreads();
        for (int off = 1; off < TILE; off <<= 1) {
            const unsigned add = t >= (unsigned)off ? zeros[t - off] : 0u;
            __syncthreads();
            zeros[t] += add;
            __syncthreads();
        }
        const unsigned zerosBefore = zeros[t] - (1u - bit);
        const unsigned dst = bit ? zeros[TILE - 1] + (t - zerosBefore) : zerosBefore;
        sKeys[dst] = key;
        sVals[dst] = val;
        __syncthreads();
        key = sKeys[t];
        val = sVals[t];
        __syncthreads();
    }
    const unsigned d = digitOf<BITS>(key, shift);
    if (t == 0 || digitOf<BITS>(sKeys[t - 1], shift) != d) digitStart[d] = t;
    __syncthreads();
    const unsigned pos = offsets[d * gridDim.x + blockIdx.x] + (t - digitStart[d]);
    keysOut[pos] = key;
    valsOut[pos] = val;
}

int main() {
    std::vector<unsigned> keys(N), idx(N);
    unsigned x = 0x9E3779B9u;
    for (int i = 0; i < N; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        keys[i] = (i % 4 == 3) ? keys[i / 2] : x;  // a quarter are duplicates
        idx[i] = i;
    }
    unsigned *dKeys[2], *dVals[2], *dHist;
    for (int k = 0; k < 2; ++k) {
        HIP_CHECK(hipMalloc(&dKeys[k], N * sizeof(unsigned)));
        HIP_CHECK(hipMalloc(&dVals[k], N * sizeof(unsigned)));
    }
    HIP_CHECK(hipMalloc(&dHist, RADIX * NUM_TILES * sizeof(unsigned)));
    HIP_CHECK(hipMemcpy(dKeys[0], keys.data(), N * sizeof(unsigned), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dVals[0], idx.data(), N * sizeof(unsigned), hipMemcpyHostToDevice));

    hipEvent_t t0, t1;
    HIP_CHECK(hipEventCreate(&t0));
    HIP_CHECK(hipEventCreate(&t1));
    HIP_CHECK(hipEventRecord(t0));
    int cur = 0;
    for (int shift = 0; shift < 32; shift += DIGIT_BITS) {
        tileHistogram<DIGIT_BITS><<<NUM_TILES, TILE>>>(dKeys[cur], dHist, shift);
        scanHistogram<<<1, SCAN_THREADS>>>(dHist);
        tileScatter<DIGIT_BITS><<<NUM_TILES, TILE>>>(dKeys[cur], dVals[cur], dKeys[1 - cur], dVals[1 - cur], dHist, shift);
        HIP_CHECK(hipGetLastError());
        cur = 1 - cur;
    }
    HIP_CHECK(hipEventRecord(t1));
    HIP_CHECK(hipEventSynchronize(t1));
    float ms = 0;
    HIP_CHECK(hipEventElapsedTime(&ms, t0, t1));
    fprintf(stderr, "radix sort: %.3f ms for %d passes\n", ms, 32 / DIGIT_BITS);

    std::vector<unsigned> sortedKeys(N), sortedIdx(N);
    HIP_CHECK(hipMemcpy(sortedKeys.data(), dKeys[cur], N * sizeof(unsigned), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(sortedIdx.data(), dVals[cur], N * sizeof(unsigned), hipMemcpyDeviceToHost));

    std::vector<unsigned> ref(idx);
    std::stable_sort(ref.begin(), ref.end(), [&](unsigned a, unsigned b) { return keys[a] < keys[b]; });
    int wrong = 0, dupPairs = 0;
    unsigned long long weighted = 0;
    for (int i = 0; i < N; ++i) {
        if (sortedIdx[i] != ref[i] || sortedKeys[i] != keys[ref[i]]) ++wrong;
        if (i > 0 && sortedKeys[i] == sortedKeys[i - 1]) ++dupPairs;
        weighted += (unsigned long long)sortedKeys[i] * (unsigned long long)(i + 1);
    }
    printf("n=%d passes=%d tiles=%d\n", N, 32 / DIGIT_BITS, NUM_TILES);
    printf("min=%u median=%u max=%u equal neighbours=%d\n", sortedKeys[0], sortedKeys[N / 2], sortedKeys[N - 1], dupPairs);
    printf("weighted checksum=%llu\n", weighted);
    printf("positions differing from std::stable_sort=%d\n", wrong);

    for (int k = 0; k < 2; ++k) {
        HIP_CHECK(hipFree(dKeys[k]));
        HIP_CHECK(hipFree(dVals[k]));
    }
    HIP_CHECK(hipFree(dHist));
    HIP_CHECK(hipEventDestroy(t0));
    HIP_CHECK(hipEventDestroy(t1));
    return wrong == 0 ? 0 : 1;
}
