// AES-128 encryption/decryption in CTR mode over a 64 KiB buffer (4096
// blocks), optimized for on-chip lookups: the 11 expanded round keys live in
// __constant__ memory (uniform across the warp) and every block copies the
// S-box into shared memory before encrypting (data-dependent lookups that
// would serialize in constant memory). One thread encrypts one 16-byte
// counter block; CTR decryption is the same operation. Checked against the
// FIPS-197 appendix C.1 vector and a host implementation.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err = (call);                                               \
        if (err != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error: %s at %s:%d\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                        \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define NUM_BLOCKS_DATA 4096
#define THREADS 128

static uint8_t hSbox[256];
__constant__ uint8_t cRoundKeys[176];
__constant__ uint8_t cSboxConst[256];

__host__ __device__ inline uint8_t xtime(uint8_t x) { return (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1b : 0x00)); }

// Encrypt one 16-byte state in place (column-major state as in FIPS-197).
__host__ __device__ void aesEncryptBlock(uint8_t s[16], const uint8_t* rk, const uint8_t* sbox) {
    for (int i = 0; i < 16; ++i) s[i] ^= rk[i];
    for (int round = 1; round <= 10; ++round) {
        uint8_t t[16];
        // SubBytes + ShiftRows: row r of column c comes from column (c + r) mod 4
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r) t[4 * c + r] = sbox[s[4 * ((c + r) & 3) + r]];
        if (round != 10) {  // MixColumns
            for (int c = 0; c < 4; ++c) {
                const uint8_t a0 = t[4 * c], a1 = t[4 * c + 1], a2 = t[4 * c + 2], a3 = t[4 * c + 3];
                const uint8_t all = a0 ^ a1 ^ a2 ^ a3;
                t[4 * c + 0] = a0 ^ all ^ xtime(a0 ^ a1);
                t[4 * c + 1] = a1 ^ all ^ xtime(a1 ^ a2);
                t[4 * c + 2] = a2 ^ all ^ xtime(a2 ^ a3);
                t[4 * c + 3] = a3 ^ all ^ xtime(a3 ^ a0);
            }
        }
        for (int i = 0; i < 16; ++i) s[i] = t[i] ^ rk[16 * round + i];
    }
}

__global__ void aesCtr(const uint8_t* in, uint8_t* out, int numBlocks, uint64_t nonce) {
    __shared__ uint8_t sSbox[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) sSbox[i] = cSboxConst[i];
    __syncthreads();

    const int blk = blockIdx.x * blockDim.x + threadIdx.x;
    if (blk >= numBlocks) return;
    uint8_t ks[16];
    for (int i = 0; i < 8; ++i) ks[i] = (uint8_t)(nonce >> (56 - 8 * i));
    const uint64_t ctr = (uint64_t)blk;
    for (int i = 0; i < 8; ++i) ks[8 + i] = (uint8_t)(ctr >> (56 - 8 * i));
    aesEncryptBlock(ks, cRoundKeys, sSbox);
    for (int i = 0; i < 16; ++i) out[16 * blk + i] = in[16 * blk + i] ^ ks[i];
}

__global__ void aesEcbSingle(uint8_t* block) {
    aesEncryptBlock(block, cRoundKeys, cSboxConst);
}

static void buildSbox() {
    // S(x) = affine(x^-1) in GF(2^8); generated instead of typed in.
    uint8_t p = 1, q = 1;
    do {
        p = p ^ (uint8_t)(p << 1) ^ ((p & 0x80) ? 0x1b : 0);  // p *= 3
        q ^= q << 1;                                           // q /= 3
        q ^= q << 2;
        q ^= q << 4;
        if (q & 0x80) q ^= 0x09;
        const uint8_t x = q ^ (uint8_t)((q << 1) | (q >> 7)) ^ (uint8_t)((q << 2) | (q >> 6)) ^
                          (uint8_t)((q << 3) | (q >> 5)) ^ (uint8_t)((q << 4) | (q >> 4));
        hSbox[p] = x ^ 0x63;
    } while (p != 1);
    hSbox[0] = 0x63;
}

static void expandKey(const uint8_t key[16], uint8_t rk[176]) {
    memcpy(rk, key, 16);
    uint8_t rcon = 1;
    for (int i = 16; i < 176; i += 4) {
        uint8_t t[4] = {rk[i - 4], rk[i - 3], rk[i - 2], rk[i - 1]};
        if (i % 16 == 0) {
            const uint8_t tmp = t[0];
            t[0] = hSbox[t[1]] ^ rcon;
            t[1] = hSbox[t[2]];
            t[2] = hSbox[t[3]];
            t[3] = hSbox[tmp];
            rcon = xtime(rcon);
        }
        for (int k = 0; k < 4; ++k) rk[i + k] = rk[i - 16 + k] ^ t[k];
    }
}

int main() {
    buildSbox();
    uint8_t key[16], rk[176];
    for (int i = 0; i < 16; ++i) key[i] = (uint8_t)i;  // FIPS-197 C.1 key 000102...0f
    expandKey(key, rk);
    CUDA_CHECK(cudaMemcpyToSymbol(cRoundKeys, rk, sizeof(rk)));
    CUDA_CHECK(cudaMemcpyToSymbol(cSboxConst, hSbox, sizeof(hSbox)));

    // Known-answer test.
    uint8_t kat[16];
    for (int i = 0; i < 16; ++i) kat[i] = (uint8_t)(i * 0x11);  // 00112233...ff
    uint8_t* dKat;
    CUDA_CHECK(cudaMalloc(&dKat, 16));
    CUDA_CHECK(cudaMemcpy(dKat, kat, 16, cudaMemcpyHostToDevice));
    aesEcbSingle<<<1, 1>>>(dKat);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(kat, dKat, 16, cudaMemcpyDeviceToHost));
    const uint8_t expected[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                  0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
    const bool katOk = memcmp(kat, expected, 16) == 0;

    const size_t bytes = (size_t)NUM_BLOCKS_DATA * 16;
    std::vector<uint8_t> plain(bytes), cipher(bytes), back(bytes);
    for (size_t i = 0; i < bytes; ++i) plain[i] = (uint8_t)((i * 31 + (i >> 8)) & 0xff);
    const uint64_t nonce = 0x0123456789abcdefULL;

    uint8_t *dPlain, *dCipher, *dBack;
    CUDA_CHECK(cudaMalloc(&dPlain, bytes));
    CUDA_CHECK(cudaMalloc(&dCipher, bytes));
    CUDA_CHECK(cudaMalloc(&dBack, bytes));
    CUDA_CHECK(cudaMemcpy(dPlain, plain.data(), bytes, cudaMemcpyHostToDevice));
    const int grid = (NUM_BLOCKS_DATA + THREADS - 1) / THREADS;
    aesCtr<<<grid, THREADS>>>(dPlain, dCipher, NUM_BLOCKS_DATA, nonce);
    aesCtr<<<grid, THREADS>>>(dCipher, dBack, NUM_BLOCKS_DATA, nonce);  // decrypt = encrypt in CTR
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(cipher.data(), dCipher, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back.data(), dBack, bytes, cudaMemcpyDeviceToHost));

    // Host check of a sample of blocks.
    int hostMismatch = 0;
    for (int blk = 0; blk < NUM_BLOCKS_DATA; blk += 97) {
        uint8_t ks[16];
        for (int i = 0; i < 8; ++i) ks[i] = (uint8_t)(nonce >> (56 - 8 * i));
        for (int i = 0; i < 8; ++i) ks[8 + i] = (uint8_t)((uint64_t)blk >> (56 - 8 * i));
        aesEncryptBlock(ks, rk, hSbox);
        for (int i = 0; i < 16; ++i)
            if ((uint8_t)(plain[16 * blk + i] ^ ks[i]) != cipher[16 * blk + i]) ++hostMismatch;
    }
    uint32_t fold = 0;
    for (size_t i = 0; i < bytes; ++i) fold = fold * 16777619u ^ cipher[i];

    printf("FIPS-197 C.1 ciphertext: ");
    for (int i = 0; i < 16; ++i) printf("%02x", kat[i]);
    printf(" (%s)\n", katOk ? "correct" : "WRONG");
    printf("CTR: %zu bytes, first cipher block: ", bytes);
    for (int i = 0; i < 16; ++i) printf("%02x", cipher[i]);
    printf("\nciphertext hash=%08x\n", fold);
    printf("host spot check mismatches=%d, round trip %s\n", hostMismatch, plain == back ? "ok" : "FAILED");

    cudaFree(dKat); cudaFree(dPlain); cudaFree(dCipher); cudaFree(dBack);
    return (katOk && hostMismatch == 0 && plain == back) ? 0 : 1;
}
