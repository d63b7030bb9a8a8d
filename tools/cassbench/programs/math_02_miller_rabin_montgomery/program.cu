// Deterministic Miller-Rabin primality test for 64-bit odd numbers below
// 2^63, with Montgomery multiplication on the device: n' = -n^-1 mod 2^64 by
// Newton iteration, REDC with __umul64hi, R^2 mod n by doubling. The seven
// Sinclair bases (constant memory) make the test exact for every 64-bit n.
// A grid-stride loop tests 65536 consecutive odd numbers above 2^61 plus a
// few special values; the host checks every verdict with an independent
// unsigned __int128 implementation.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                               \
    do {                                                                               \
        cudaError_t status = (call);                                                   \
        if (status != cudaSuccess) {                                                   \
            fprintf(stderr, "CUDA error at %s:%d: %s\n", __FILE__, __LINE__,           \
                    cudaGetErrorString(status));                                       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

typedef unsigned long long u64;

const int NUM_BASES = 7;
__constant__ u64 c_bases[NUM_BASES];

struct Montgomery {
    u64 n, nprime, one, r2;
};

__device__ u64 redc(u64 hi, u64 lo, const Montgomery& m) {
    const u64 q = lo * m.nprime;
    const u64 qnHi = __umul64hi(q, m.n);
    const u64 t = hi + qnHi + (lo != 0 ? 1ull : 0ull);  // lo + q*n.lo wraps to 0
    return t >= m.n ? t - m.n : t;
}

__device__ u64 montMul(u64 a, u64 b, const Montgomery& m) { return redc(__umul64hi(a, b), a * b, m); }

__device__ Montgomery makeMontgomery(u64 n) {
    Montgomery m;
    m.n = n;
    u64 inv = n;  // correct to 3 bits for odd n
    for (int i = 0; i < 5; ++i) inv *= 2ull - n * inv;
    m.nprime = 0ull - inv;
    m.one = (0ull - n) % n;  // 2^64 mod n
    u64 x = m.one;
    for (int i = 0; i < 64; ++i) {  // 2^128 mod n; n < 2^63 keeps 2x below 2^64
        x <<= 1;
        if (x >= n) x -= n;
    }
    m.r2 = x;
    return m;
}

__device__ bool isPrimeDevice(u64 n) {
    if (n < 2) return false;
    if (n % 2 == 0) return n == 2;
    const Montgomery m = makeMontgomery(n);
    u64 d = n - 1;
    int s = 0;
    while ((d & 1ull) == 0) {
        d >>= 1;
        ++s;
    }
    const u64 minusOne = n - m.one;
    for (int b = 0; b < NUM_BASES; ++b) {
        const u64 a = c_bases[b] % n;
        if (a == 0) continue;
        u64 base = montMul(a, m.r2, m), x = m.one;
        for (u64 e = d; e; e >>= 1) {
            if (e & 1ull) x = montMul(x, base, m);
            base = montMul(base, base, m);
        }
        if (x == m.one || x == minusOne) continue;
        bool witness = true;
        for (int r = 1; r < s && witness; ++r) {
            x = montMul(x, x, m);
            if (x == minusOne) witness = false;
        }
        if (witness) return false;
    }
    return true;
}

__global__ void testCandidates(const u64* candidates, int count, unsigned char* verdict, u64* primesFound) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        const bool prime = isPrimeDevice(candidates[i]);
        verdict[i] = prime ? 1 : 0;
        if (prime) atomicAdd(primesFound, 1ull);
    }
}

static u64 powModHost(u64 a, u64 e, u64 n) {
    unsigned __int128 r = 1, b = a % n;
    for (; e; e >>= 1) {
        if (e & 1) r = r * b % n;
        b = b * b % n;
    }
    return (u64)r;
}

static bool isPrimeHost(u64 n, const u64* bases) {
    if (n < 2) return false;
    if (n % 2 == 0) return n == 2;
    u64 d = n - 1;
    int s = 0;
    while (!(d & 1)) d >>= 1, ++s;
    for (int b = 0; b < NUM_BASES; ++b) {
        if (bases[b] % n == 0) continue;
        u64 x = powModHost(bases[b], d, n);
        if (x == 1 || x == n - 1) continue;
        int r = 1;
        for (; r < s; ++r) {
            x = (u64)((unsigned __int128)x * x % n);
            if (x == n - 1) break;
        }
        if (r == s) return false;
    }
    return true;
}

int main() {
    const u64 bases[NUM_BASES] = {2ull, 325ull, 9375ull, 28178ull, 450775ull, 9780504ull, 1795265022ull};
    const u64 special[] = {561ull, 1000000007ull, 3215031751ull, (1ull << 61) - 1, (1ull << 62) - 57,
                           4611686014132420609ull, 3825123056546413051ull};
    const int numSpecial = sizeof(special) / sizeof(special[0]);
    const int numRange = 65536;
    std::vector<u64> cand;
    for (int i = 0; i < numRange; ++i) cand.push_back((1ull << 61) + 1 + 2ull * i);
    for (int i = 0; i < numSpecial; ++i) cand.push_back(special[i]);
    const int count = (int)cand.size();

    CUDA_CHECK(cudaMemcpyToSymbol(c_bases, bases, sizeof(bases)));
    u64 *dCand, *dFound;
    unsigned char* dVerdict;
    CUDA_CHECK(cudaMalloc(&dCand, count * sizeof(u64)));
    CUDA_CHECK(cudaMalloc(&dVerdict, count));
    CUDA_CHECK(cudaMalloc(&dFound, sizeof(u64)));
    CUDA_CHECK(cudaMemcpy(dCand, cand.data(), count * sizeof(u64), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dFound, 0, sizeof(u64)));
    testCandidates<<<64, 128>>>(dCand, count, dVerdict, dFound);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned char> verdict(count);
    u64 found = 0;
    CUDA_CHECK(cudaMemcpy(verdict.data(), dVerdict, count, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&found, dFound, sizeof(u64), cudaMemcpyDeviceToHost));

    int mismatches = 0, rangePrimes = 0, primeVerdicts = 0;
    u64 firstPrime = 0, lastPrime = 0, xorPrimes = 0;
    for (int i = 0; i < count; ++i) {
        if ((verdict[i] != 0) != isPrimeHost(cand[i], bases)) ++mismatches;
        primeVerdicts += verdict[i] ? 1 : 0;
        if (i < numRange && verdict[i]) {
            ++rangePrimes;
            if (!firstPrime) firstPrime = cand[i];
            lastPrime = cand[i];
            xorPrimes ^= cand[i];
        }
    }
    printf("range: %d odd numbers from 2^61+1, primes=%d\n", numRange, rangePrimes);
    printf("first=%llu last=%llu xor=%016llx\n", firstPrime, lastPrime, xorPrimes);
    for (int i = 0; i < numSpecial; ++i)
        printf("%llu: %s\n", special[i], verdict[numRange + i] ? "prime" : "composite");
    printf("device count=%llu mismatches vs host=%d\n", found, mismatches);

    CUDA_CHECK(cudaFree(dCand));
    CUDA_CHECK(cudaFree(dVerdict));
    CUDA_CHECK(cudaFree(dFound));
    return (mismatches == 0 && found == (u64)primeVerdicts) ? 0 : 1;
}
