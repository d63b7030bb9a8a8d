// Password cracking using brute force against MD5 hashes, optimized for
// keeping the search loop tight: every thread walks a grid-stride range of
// the 26^5 lowercase 5-character candidates, builds the single padded MD5
// block in registers, and compares the digest with the targets held in
// __constant__ memory. A hit is recorded with atomicCAS (first writer wins);
// threads poll a "remaining targets" counter and leave early once everything
// is cracked. The MD5 implementation is checked against the RFC 1321 vector for
// "abc" first.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
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

#define PW_LEN 5
#define SPACE (26 * 26 * 26 * 26 * 26)
#define NUM_TARGETS 3

__constant__ uint32_t cT[64];
__constant__ uint32_t cTargets[NUM_TARGETS][4];
__constant__ int cShift[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                               5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                               4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                               6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

__device__ __forceinline__ uint32_t rotl(uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

// MD5 of a message shorter than 56 bytes (a single block). Digest as 4 little-endian words.
__device__ void md5Short(const uint8_t* msg, int len, uint32_t out[4]) {
    uint32_t m[16];
    for (int i = 0; i < 16; ++i) m[i] = 0;
    for (int i = 0; i < len; ++i) m[i >> 2] |= (uint32_t)msg[i] << (8 * (i & 3));
    m[len >> 2] |= 0x80u << (8 * (len & 3));
    m[14] = (uint32_t)len * 8;

    uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
    for (int i = 0; i < 64; ++i) {
        uint32_t f;
        int g;
        if (i < 16) { f = (b & c) | (~b & d); g = i; }
        else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
        else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
        else { f = c ^ (b | ~d); g = (7 * i) & 15; }
        const uint32_t tmp = d;
        d = c;
        c = b;
        b = b + rotl(a + f + cT[i] + m[g], cShift[i]);
        a = tmp;
    }
    out[0] = a + 0x67452301;
    out[1] = b + 0xefcdab89;
    out[2] = c + 0x98badcfe;
    out[3] = d + 0x10325476;
}

__global__ void md5Test(const uint8_t* msg, int len, uint32_t* out) { md5Short(msg, len, out); }

__global__ void crack(int* foundIndex, int* remaining) {
    const int stride = blockDim.x * gridDim.x;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < SPACE; idx += stride) {
        if (*(volatile int*)remaining == 0) return;
        uint8_t pw[PW_LEN];
        int v = idx;
        for (int k = PW_LEN - 1; k >= 0; --k) {
            pw[k] = (uint8_t)('a' + v % 26);
            v /= 26;
        }
        uint32_t h[4];
        md5Short(pw, PW_LEN, h);
        for (int t = 0; t < NUM_TARGETS; ++t) {
            if (h[0] == cTargets[t][0] && h[1] == cTargets[t][1] && h[2] == cTargets[t][2] && h[3] == cTargets[t][3]) {
                if (atomicCAS(&foundIndex[t], -1, idx) == -1) atomicSub(remaining, 1);
            }
        }
    }
}

// Host MD5 (same algorithm) used to create the target hashes.
static void hostMd5(const char* s, uint32_t out[4], const uint32_t T[64]) {
    static const int S[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
    const int len = (int)strlen(s);
    uint32_t m[16] = {0};
    for (int i = 0; i < len; ++i) m[i >> 2] |= (uint32_t)(uint8_t)s[i] << (8 * (i & 3));
    m[len >> 2] |= 0x80u << (8 * (len & 3));
    m[14] = (uint32_t)len * 8;
    uint32_t a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
    for (int i = 0; i < 64; ++i) {
        uint32_t f;
        int g;
        if (i < 16) { f = (b & c) | (~b & d); g = i; }
        else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
        else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
        else { f = c ^ (b | ~d); g = (7 * i) & 15; }
        const uint32_t tmp = d, x = a + f + T[i] + m[g];
        const int r = S[i / 16][i % 4];
        d = c;
        c = b;
        b = b + ((x << r) | (x >> (32 - r)));
        a = tmp;
    }
    out[0] = a + 0x67452301; out[1] = b + 0xefcdab89; out[2] = c + 0x98badcfe; out[3] = d + 0x10325476;
}

static void printDigest(const uint32_t h[4]) {
    for (int w = 0; w < 4; ++w)
        for (int b = 0; b < 4; ++b) printf("%02x", (h[w] >> (8 * b)) & 0xff);
}

int main() {
    // T[i] = floor(2^32 * |sin(i + 1)|), the RFC 1321 table.
    static const uint32_t T[64] = {
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
    CUDA_CHECK(cudaMemcpyToSymbol(cT, T, sizeof(T)));

    // Self-test: MD5("abc") = 900150983cd24fb0d6963f7d28e17f72
    uint8_t* dMsg;
    uint32_t* dOut;
    uint32_t abc[4];
    CUDA_CHECK(cudaMalloc(&dMsg, 8));
    CUDA_CHECK(cudaMalloc(&dOut, 4 * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(dMsg, "abc", 3, cudaMemcpyHostToDevice));
    md5Test<<<1, 1>>>(dMsg, 3, dOut);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(abc, dOut, sizeof(abc), cudaMemcpyDeviceToHost));
    const uint32_t abcExpected[4] = {0x98500190, 0xb04fd23c, 0x7d3f96d6, 0x727fe128};
    const bool selfTest = memcmp(abc, abcExpected, sizeof(abc)) == 0;
    printf("md5(\"abc\") = ");
    printDigest(abc);
    printf(" (%s)\n", selfTest ? "RFC 1321 ok" : "WRONG");

    // Two 5-letter secrets are in the search space; the 6-letter one is not.
    const char* secrets[NUM_TARGETS] = {"cudaz", "zebra", "gpgpus"};
    uint32_t targets[NUM_TARGETS][4];
    for (int t = 0; t < NUM_TARGETS; ++t) hostMd5(secrets[t], targets[t], T);
    CUDA_CHECK(cudaMemcpyToSymbol(cTargets, targets, sizeof(targets)));

    int *dFound, *dRemaining;
    int initFound[NUM_TARGETS] = {-1, -1, -1}, remaining = NUM_TARGETS;
    CUDA_CHECK(cudaMalloc(&dFound, sizeof(initFound)));
    CUDA_CHECK(cudaMalloc(&dRemaining, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dFound, initFound, sizeof(initFound), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dRemaining, &remaining, sizeof(int), cudaMemcpyHostToDevice));

    crack<<<512, 256>>>(dFound, dRemaining);
    CUDA_CHECK(cudaGetLastError());
    int found[NUM_TARGETS];
    CUDA_CHECK(cudaMemcpy(found, dFound, sizeof(found), cudaMemcpyDeviceToHost));

    printf("search space: %d candidates of %d lowercase letters\n", SPACE, PW_LEN);
    int cracked = 0;
    for (int t = 0; t < NUM_TARGETS; ++t) {
        printf("target ");
        printDigest(targets[t]);
        if (found[t] >= 0) {
            char pw[PW_LEN + 1];
            int v = found[t];
            for (int k = PW_LEN - 1; k >= 0; --k) {
                pw[k] = (char)('a' + v % 26);
                v /= 26;
            }
            pw[PW_LEN] = '\0';
            printf(" -> \"%s\" (candidate #%d)\n", pw, found[t]);
            ++cracked;
        } else {
            printf(" -> not in search space\n");
        }
    }
    printf("cracked %d of %d\n", cracked, NUM_TARGETS);

    cudaFree(dMsg); cudaFree(dOut); cudaFree(dFound); cudaFree(dRemaining);
    return (selfTest && cracked == 2) ? 0 : 1;
}
