// Secure hashing using SHA-256 over a batch of 1024 messages of varying
// length (3 to 200 bytes), focused on throughput: one thread hashes one
// message, the 64 round constants sit in __constant__ memory, the message
// schedule is kept in a 16-word rolling window in registers, and padding is
// generated on the fly (no padded copy of the input). The GPU digests are
// checked against the FIPS 180-2 "abc" vector and a host implementation.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e = (call);                                               \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(e), __FILE__, __LINE__);               \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define NUM_MESSAGES 1024

static const uint32_t hK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
static const uint32_t hInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

__constant__ uint32_t cK[64];
__constant__ uint32_t cInit[8];

__host__ __device__ inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// Byte `pos` of the padded message: data, 0x80, zeros, 64-bit big-endian bit length.
__host__ __device__ inline uint8_t paddedByte(const uint8_t* msg, uint32_t len, uint32_t paddedLen, uint32_t pos) {
    if (pos < len) return msg[pos];
    if (pos == len) return 0x80;
    if (pos >= paddedLen - 8) {
        const uint64_t bits = (uint64_t)len * 8;
        return (uint8_t)(bits >> (8 * (paddedLen - 1 - pos)));
    }
    return 0;
}

__host__ __device__ void sha256(const uint8_t* msg, uint32_t len, const uint32_t* K, const uint32_t* init,
                                uint32_t out[8]) {
    uint32_t h[8];
    for (int i = 0; i < 8; ++i) h[i] = init[i];
    const uint32_t paddedLen = ((len + 8) / 64 + 1) * 64;
    for (uint32_t block = 0; block < paddedLen; block += 64) {
        uint32_t w[16];
        for (int i = 0; i < 16; ++i) {
            uint32_t v = 0;
            for (int b = 0; b < 4; ++b) v = (v << 8) | paddedByte(msg, len, paddedLen, block + 4 * i + b);
            w[i] = v;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int t = 0; t < 64; ++t) {
            uint32_t wt;
            if (t < 16) {
                wt = w[t];
            } else {
                const uint32_t w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
                const uint32_t s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3);
                const uint32_t s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10);
                wt = w[t & 15] = w[t & 15] + s0 + w[(t - 7) & 15] + s1;
            }
            const uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
            const uint32_t ch = (e & f) ^ (~e & g);
            const uint32_t t1 = hh + S1 + ch + K[t] + wt;
            const uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
            const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
            const uint32_t t2 = S0 + maj;
            hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    for (int i = 0; i < 8; ++i) out[i] = h[i];
}

__global__ void sha256Batch(const uint8_t* data, const uint32_t* offsets, const uint32_t* lengths, uint32_t* digests,
                            int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    sha256(data + offsets[i], lengths[i], cK, cInit, digests + 8 * i);
}

int main() {
    std::vector<uint32_t> offsets(NUM_MESSAGES), lengths(NUM_MESSAGES);
    std::vector<uint8_t> data;
    for (int i = 0; i < NUM_MESSAGES; ++i) {
        offsets[i] = (uint32_t)data.size();
        if (i == 0) {
            const char* abc = "abc";
            data.insert(data.end(), abc, abc + 3);
            lengths[i] = 3;
            continue;
        }
        lengths[i] = 3 + (i * 37) % 198;
        for (uint32_t k = 0; k < lengths[i]; ++k) data.push_back((uint8_t)('a' + (i * 7 + k * 13) % 26));
    }

    CUDA_CHECK(cudaMemcpyToSymbol(cK, hK, sizeof(hK)));
    CUDA_CHECK(cudaMemcpyToSymbol(cInit, hInit, sizeof(hInit)));
    uint8_t* dData;
    uint32_t *dOffsets, *dLengths, *dDigests;
    CUDA_CHECK(cudaMalloc(&dData, data.size()));
    CUDA_CHECK(cudaMalloc(&dOffsets, NUM_MESSAGES * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&dLengths, NUM_MESSAGES * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&dDigests, NUM_MESSAGES * 8 * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(dData, data.data(), data.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dOffsets, offsets.data(), NUM_MESSAGES * sizeof(uint32_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dLengths, lengths.data(), NUM_MESSAGES * sizeof(uint32_t), cudaMemcpyHostToDevice));

    sha256Batch<<<(NUM_MESSAGES + 127) / 128, 128>>>(dData, dOffsets, dLengths, dDigests, NUM_MESSAGES);
    CUDA_CHECK(cudaGetLastError());
    std::vector<uint32_t> digests(NUM_MESSAGES * 8);
    CUDA_CHECK(cudaMemcpy(digests.data(), dDigests, digests.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));

    int mismatches = 0;
    uint32_t folded[8] = {0};
    for (int i = 0; i < NUM_MESSAGES; ++i) {
        uint32_t ref[8];
        sha256(&data[offsets[i]], lengths[i], hK, hInit, ref);
        if (memcmp(ref, &digests[8 * i], sizeof(ref)) != 0) ++mismatches;
        for (int k = 0; k < 8; ++k) folded[k] ^= digests[8 * i + k];
    }
    const uint32_t abcExpected[8] = {0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223,
                                     0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad};
    const bool abcOk = memcmp(abcExpected, &digests[0], sizeof(abcExpected)) == 0;

    printf("messages=%d total bytes=%zu\n", NUM_MESSAGES, data.size());
    printf("sha256(\"abc\") = ");
    for (int k = 0; k < 8; ++k) printf("%08x", digests[k]);
    printf(" (%s)\n", abcOk ? "matches FIPS 180-2" : "WRONG");
    printf("sha256(msg 1023, %u bytes) = ", lengths[NUM_MESSAGES - 1]);
    for (int k = 0; k < 8; ++k) printf("%08x", digests[8 * (NUM_MESSAGES - 1) + k]);
    printf("\nxor of all digests = ");
    for (int k = 0; k < 8; ++k) printf("%08x", folded[k]);
    printf("\nhost mismatches=%d\n", mismatches);

    cudaFree(dData); cudaFree(dOffsets); cudaFree(dLengths); cudaFree(dDigests);
    return (abcOk && mismatches == 0) ? 0 : 1;
}
