// Blockchain mining with difficulty 20 (the double SHA-256 of an 80-byte
// block header must start with 20 zero bits), focused on hashing throughput:
//   - the first 64 header bytes do not depend on the nonce, so their
//     compression ("midstate") is computed once on the host;
//   - rotations use the funnel-shift instruction through inline PTX
//     (shf.r.wrap.b32), byte swaps use prmt.b32;
//   - a grid-stride loop scans 2^24 nonces, solutions are counted with
//     atomicAdd and the smallest winning nonce is kept with atomicMin.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(e_), __FILE__, __LINE__);              \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define DIFFICULTY_BITS 20
#define NONCE_RANGE (1u << 24)

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

__constant__ uint32_t cK[64];
__constant__ uint32_t cH0[8];
__constant__ uint32_t cMidstate[8];
__constant__ uint32_t cTail[3];  // header words 16..18 (bytes 64..75), big-endian

__device__ __forceinline__ uint32_t rotr32(uint32_t x, uint32_t n) {
    uint32_t r;
    asm("shf.r.wrap.b32 %0, %1, %1, %2;" : "=r"(r) : "r"(x), "r"(n));
    return r;
}

__device__ __forceinline__ uint32_t bswap32(uint32_t x) {
    uint32_t r;
    asm("prmt.b32 %0, %1, 0, 0x0123;" : "=r"(r) : "r"(x));
    return r;
}

__device__ void compress(uint32_t state[8], uint32_t w[16]) {
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
#pragma unroll
    for (int t = 0; t < 64; ++t) {
        if (t >= 16) {
            const uint32_t w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
            w[t & 15] += (rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3)) + w[(t - 7) & 15] +
                         (rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10));
        }
        const uint32_t t1 = h + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) + ((e & f) ^ (~e & g)) + cK[t] + w[t & 15];
        const uint32_t t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

__global__ void mine(unsigned int* bestNonce, unsigned int* solutions) {
    for (uint32_t nonce = blockIdx.x * blockDim.x + threadIdx.x; nonce < NONCE_RANGE; nonce += blockDim.x * gridDim.x) {
        // Second chunk of the header: bytes 64..79 + padding, length 640 bits.
        uint32_t w[16] = {cTail[0], cTail[1], cTail[2], bswap32(nonce), 0x80000000u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 640};
        uint32_t s[8];
        for (int i = 0; i < 8; ++i) s[i] = cMidstate[i];
        compress(s, w);
        // Second SHA-256 over the 32-byte digest.
        uint32_t w2[16] = {s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], 0x80000000u, 0, 0, 0, 0, 0, 0, 256};
        uint32_t s2[8];
        for (int i = 0; i < 8; ++i) s2[i] = cH0[i];
        compress(s2, w2);
        if ((s2[0] >> (32 - DIFFICULTY_BITS)) == 0) {
            atomicAdd(solutions, 1u);
            atomicMin(bestNonce, nonce);
        }
    }
}

// ---- host reference SHA-256 (plain C++) ----
static uint32_t hrotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
static void hostCompress(uint32_t st[8], const uint32_t in[16]) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = in[t];
    for (int t = 16; t < 64; ++t)
        w[t] = w[t - 16] + (hrotr(w[t - 15], 7) ^ hrotr(w[t - 15], 18) ^ (w[t - 15] >> 3)) + w[t - 7] +
               (hrotr(w[t - 2], 17) ^ hrotr(w[t - 2], 19) ^ (w[t - 2] >> 10));
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int t = 0; t < 64; ++t) {
        const uint32_t t1 = h + (hrotr(e, 6) ^ hrotr(e, 11) ^ hrotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        const uint32_t t2 = (hrotr(a, 2) ^ hrotr(a, 13) ^ hrotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

int main() {
    // 80-byte header: version, previous hash, merkle root, time, bits (deterministic filler), nonce.
    uint8_t header[80];
    for (int i = 0; i < 76; ++i) header[i] = (uint8_t)(i * 29 + 7);
    uint32_t words[20];
    for (int i = 0; i < 19; ++i)
        words[i] = (uint32_t)header[4 * i] << 24 | (uint32_t)header[4 * i + 1] << 16 | (uint32_t)header[4 * i + 2] << 8 |
                   header[4 * i + 3];

    uint32_t midstate[8];
    memcpy(midstate, H0, sizeof(H0));
    hostCompress(midstate, words);

    CUDA_CHECK(cudaMemcpyToSymbol(cK, K, sizeof(K)));
    CUDA_CHECK(cudaMemcpyToSymbol(cH0, H0, sizeof(H0)));
    CUDA_CHECK(cudaMemcpyToSymbol(cMidstate, midstate, sizeof(midstate)));
    CUDA_CHECK(cudaMemcpyToSymbol(cTail, &words[16], 3 * sizeof(uint32_t)));

    unsigned int *dBest, *dCount;
    const unsigned int initBest = 0xffffffffu;
    CUDA_CHECK(cudaMalloc(&dBest, sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dCount, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(dBest, &initBest, sizeof(initBest), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dCount, 0, sizeof(unsigned int)));

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaEventRecord(start));
    mine<<<1024, 256>>>(dBest, dCount);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    fprintf(stderr, "hash rate: %.1f MH/s\n", NONCE_RANGE / (ms * 1e3));

    unsigned int best = 0, count = 0;
    CUDA_CHECK(cudaMemcpy(&best, dBest, sizeof(best), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&count, dCount, sizeof(count), cudaMemcpyDeviceToHost));

    // Verify the winning nonce on the host (nonce stored little-endian in the header).
    uint32_t tail[16] = {words[16], words[17], words[18],
                         (best & 0xff) << 24 | ((best >> 8) & 0xff) << 16 | ((best >> 16) & 0xff) << 8 | (best >> 24),
                         0x80000000u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 640};
    uint32_t s1[8];
    memcpy(s1, midstate, sizeof(s1));
    hostCompress(s1, tail);
    uint32_t second[16] = {s1[0], s1[1], s1[2], s1[3], s1[4], s1[5], s1[6], s1[7], 0x80000000u, 0, 0, 0, 0, 0, 0, 256};
    uint32_t s2[8];
    memcpy(s2, H0, sizeof(s2));
    hostCompress(s2, second);
    const bool ok = count > 0 && (s2[0] >> (32 - DIFFICULTY_BITS)) == 0;

    printf("difficulty=%d bits, nonces scanned=%u\n", DIFFICULTY_BITS, NONCE_RANGE);
    printf("solutions found=%u, smallest nonce=%u\n", count, best);
    printf("block hash (sha256d, word order) = ");
    for (int i = 0; i < 8; ++i) printf("%08x", s2[i]);
    printf("\nhost verification: %s\n", ok ? "valid" : "INVALID");

    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(dBest);
    cudaFree(dCount);
    return ok ? 0 : 1;
}
