// HIP port of math_01_segmented_sieve/program.cu (cassbench reference translation).
//
// Segmented sieve of Eratosthenes up to 2^22. Each block owns a segment of
// 32768 numbers kept as a bitmap in shared memory; threads strike out the
// multiples of the base primes (all primes below 2048, held in constant
// memory) with shared-memory atomicOr, then count the survivors with __popc
// and walk their bits to split them by residue mod 4 and to sum them. Block
// totals reach global memory with one 64-bit atomicAdd per field.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <hip/hip_runtime.h>

#define CHECK_HIP(x)                                                                   \
    do {                                                                               \
        hipError_t err_ = (x);                                                         \
        if (err_ != hipSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x,          \
                    hipGetErrorString(err_));                                          \
            exit(EXIT_FAILURE);                                                        \
        }                                                                              \
    } while (0)

constexpr unsigned LIMIT = 1u << 22;      // sieve [0, LIMIT)
constexpr unsigned SEGMENT = 1u << 15;    // numbers per block
constexpr unsigned WORDS = SEGMENT / 32;  // bitmap words per segment
constexpr int MAX_BASE = 512;
constexpr int THREADS = 256;

__constant__ unsigned c_basePrimes[MAX_BASE];

struct PrimeStats {
    unsigned long long count;  // primes below LIMIT
    unsigned long long mod1;   // primes p with p % 4 == 1
    unsigned long long sum;    // sum of the primes
};

__device__ unsigned firstMultiple(unsigned p, unsigned lo) {
    unsigned first = (lo + p - 1) / p * p;
    return first < p * p ? p * p : first;
}

__global__ void sieveSegments(int numBase, PrimeStats* stats) {
    __shared__ unsigned composite[WORDS];
    __shared__ unsigned long long blockCount, blockMod1, blockSum;
    const unsigned lo = blockIdx.x * SEGMENT;
    for (unsigned w = threadIdx.x; w < WORDS; w += blockDim.x) composite[w] = 0u;
    if (threadIdx.x == 0) {
        blockCount = 0;
        blockMod1 = 0;
        blockSum = 0;
    }
    __syncthreads();

    for (int k = 0; k < numBase; ++k) {
        const unsigned p = c_basePrimes[k];
        for (unsigned m = firstMultiple(p, lo) + threadIdx.x * p; m < lo + SEGMENT; m += blockDim.x * p)
            atomicOr(&composite[(m - lo) >> 5], 1u << ((m - lo) & 31u));
    }
    __syncthreads();

    unsigned long long count = 0, mod1 = 0, sum = 0;
    for (unsigned w = threadIdx.x; w < WORDS; w += blockDim.x) {
        unsigned bits = ~composite[w];
        if (lo == 0 && w == 0) bits &= ~3u;  // 0 and 1 are not prime
        count += __popc(bits);
        while (bits) {
            const unsigned n = lo + w * 32u + (unsigned)(__ffs(bits) - 1);
            bits &= bits - 1u;
            sum += n;
            if ((n & 3u) == 1u) ++mod1;
        }
    }
    atomicAdd(&blockCount, count);
    atomicAdd(&blockMod1, mod1);
    atomicAdd(&blockSum, sum);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&stats->count, blockCount);
        atomicAdd(&stats->mod1, blockMod1);
        atomicAdd(&stats->sum, blockSum);
    }
}

int main() {
    // Base primes below sqrt(LIMIT) = 2048, by a plain sieve on the host.
    std::vector<unsigned> base;
    std::vector<char> small(2048, 1);
    for (unsigned i = 2; i < 2048; ++i) {
        if (!small[i]) continue;
        base.push_back(i);
        for (unsigned j = i * i; j < 2048; j += i) small[j] = 0;
    }
    const int numBase = (int)base.size();
    CHECK_HIP(hipMemcpyToSymbol(HIP_SYMBOL(c_basePrimes), base.data(), numBase * sizeof(unsigned)));

    PrimeStats* dStats;
    CHECK_HIP(hipMalloc(&dStats, sizeof(PrimeStats)));
    CHECK_HIP(hipMemset(dStats, 0, sizeof(PrimeStats)));
    hipEvent_t start, stop;
    CHECK_HIP(hipEventCreate(&start));
    CHECK_HIP(hipEventCreate(&stop));
    const unsigned segments = LIMIT / SEGMENT;
    CHECK_HIP(hipEventRecord(start));
    sieveSegments<<<segments, THREADS>>>(numBase, dStats);
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipEventRecord(stop));
    CHECK_HIP(hipEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_HIP(hipEventElapsedTime(&ms, start, stop));
    fprintf(stderr, "sieve kernel: %.3f ms\n", ms);

    PrimeStats gpu;
    CHECK_HIP(hipMemcpy(&gpu, dStats, sizeof(PrimeStats), hipMemcpyDeviceToHost));

    // CPU reference: a full sieve of [0, LIMIT).
    std::vector<char> isPrime(LIMIT, 1);
    isPrime[0] = isPrime[1] = 0;
    for (unsigned i = 2; i * i < LIMIT; ++i)
        if (isPrime[i])
            for (unsigned j = i * i; j < LIMIT; j += i) isPrime[j] = 0;
    PrimeStats cpu = {0, 0, 0};
    unsigned largest = 0;
    for (unsigned n = 0; n < LIMIT; ++n) {
        if (!isPrime[n]) continue;
        ++cpu.count;
        cpu.sum += n;
        if ((n & 3u) == 1u) ++cpu.mod1;
        largest = n;
    }

    const bool ok = gpu.count == cpu.count && gpu.mod1 == cpu.mod1 && gpu.sum == cpu.sum;
    printf("limit=%u segments=%u base primes=%d\n", LIMIT, segments, numBase);
    printf("pi(limit)=%llu largest prime=%u\n", gpu.count, largest);
    printf("primes 1 mod 4=%llu, 3 mod 4=%llu\n", gpu.mod1, gpu.count - gpu.mod1 - 1);
    printf("sum of primes=%llu\n", gpu.sum);
    printf("CPU check: %s\n", ok ? "PASS" : "FAIL");

    CHECK_HIP(hipEventDestroy(start));
    CHECK_HIP(hipEventDestroy(stop));
    CHECK_HIP(hipFree(dStats));
    return ok ? 0 : 1;
}
