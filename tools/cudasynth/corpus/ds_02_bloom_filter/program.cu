// Bloom filter with 4096 inserted elements (65536-bit array, k = 4 hash
// functions), focused on minimizing atomic traffic: inserts set bits with
// atomicOr on 32-bit words (idempotent, so the final bit array does not
// depend on thread order), and queries count their positives per block in
// shared memory before a single global atomicAdd per block. The k indices
// come from double hashing of one 64-bit mix (Kirsch-Mitzenmacher).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err = (call);                                               \
        if (err != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error: %s (%s:%d)\n", cudaGetErrorString(err), \
                    __FILE__, __LINE__);                                        \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define NUM_BITS (1 << 16)
#define NUM_WORDS (NUM_BITS / 32)
#define NUM_HASHES 4
#define NUM_INSERT 4096
#define NUM_QUERY 8192

__device__ __forceinline__ uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

__device__ __forceinline__ uint32_t bitIndex(uint64_t h, int i) {
    const uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32) | 1u;
    return (h1 + (uint32_t)i * h2) & (NUM_BITS - 1);
}

__global__ void bloomInsert(uint32_t* bits, const uint64_t* keys, int n) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {
        const uint64_t h = mix64(keys[t]);
        for (int i = 0; i < NUM_HASHES; ++i) {
            const uint32_t b = bitIndex(h, i);
            atomicOr(&bits[b >> 5], 1u << (b & 31));
        }
    }
}

__global__ void bloomQuery(const uint32_t* __restrict__ bits, const uint64_t* __restrict__ keys, int n,
                           uint8_t* maybe, int* positives) {
    __shared__ int blockCount;
    if (threadIdx.x == 0) blockCount = 0;
    __syncthreads();
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        const uint64_t h = mix64(keys[t]);
        bool all = true;
        for (int i = 0; i < NUM_HASHES && all; ++i) {
            const uint32_t b = bitIndex(h, i);
            all = (bits[b >> 5] >> (b & 31)) & 1u;
        }
        maybe[t] = all ? 1 : 0;
        if (all) atomicAdd(&blockCount, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0 && blockCount) atomicAdd(positives, blockCount);
}

int main() {
    uint64_t* hInsert = (uint64_t*)malloc(NUM_INSERT * sizeof(uint64_t));
    uint64_t* hQuery = (uint64_t*)malloc(NUM_QUERY * sizeof(uint64_t));
    uint8_t* hMaybe = (uint8_t*)malloc(NUM_QUERY);
    uint32_t* hBits = (uint32_t*)malloc(NUM_WORDS * sizeof(uint32_t));
    for (int i = 0; i < NUM_INSERT; ++i) hInsert[i] = 0x1000000ULL + (uint64_t)i * 2654435761ULL;
    // First half of the queries are members, second half are not.
    for (int i = 0; i < NUM_QUERY; ++i)
        hQuery[i] = (i < NUM_QUERY / 2) ? hInsert[(i * 3) % NUM_INSERT] : 0x9000000000ULL + (uint64_t)i * 40503ULL;

    uint32_t* dBits;
    uint64_t *dInsert, *dQuery;
    uint8_t* dMaybe;
    int* dPositives;
    CUDA_CHECK(cudaMalloc(&dBits, NUM_WORDS * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&dInsert, NUM_INSERT * sizeof(uint64_t)));
    CUDA_CHECK(cudaMalloc(&dQuery, NUM_QUERY * sizeof(uint64_t)));
    CUDA_CHECK(cudaMalloc(&dMaybe, NUM_QUERY));
    CUDA_CHECK(cudaMalloc(&dPositives, sizeof(int)));
    CUDA_CHECK(cudaMemset(dBits, 0, NUM_WORDS * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemset(dPositives, 0, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dInsert, hInsert, NUM_INSERT * sizeof(uint64_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dQuery, hQuery, NUM_QUERY * sizeof(uint64_t), cudaMemcpyHostToDevice));

    bloomInsert<<<16, 256>>>(dBits, dInsert, NUM_INSERT);
    bloomQuery<<<(NUM_QUERY + 255) / 256, 256>>>(dBits, dQuery, NUM_QUERY, dMaybe, dPositives);
    CUDA_CHECK(cudaGetLastError());

    int positives = 0;
    CUDA_CHECK(cudaMemcpy(&positives, dPositives, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hMaybe, dMaybe, NUM_QUERY, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hBits, dBits, NUM_WORDS * sizeof(uint32_t), cudaMemcpyDeviceToHost));

    int falseNegatives = 0, falsePositives = 0, bitsSet = 0;
    for (int i = 0; i < NUM_QUERY / 2; ++i) falseNegatives += hMaybe[i] == 0;
    for (int i = NUM_QUERY / 2; i < NUM_QUERY; ++i) falsePositives += hMaybe[i];
    for (int w = 0; w < NUM_WORDS; ++w) bitsSet += __builtin_popcount(hBits[w]);
    const double theory = pow(1.0 - exp(-(double)NUM_HASHES * NUM_INSERT / NUM_BITS), NUM_HASHES);

    printf("bits=%d hashes=%d inserted=%d\n", NUM_BITS, NUM_HASHES, NUM_INSERT);
    printf("bits set=%d (fill %.4f)\n", bitsSet, (double)bitsSet / NUM_BITS);
    printf("queries=%d positives=%d\n", NUM_QUERY, positives);
    printf("false negatives=%d (must be 0)\n", falseNegatives);
    printf("false positives=%d of %d (rate %.4f, theory %.4f)\n", falsePositives, NUM_QUERY / 2,
           (double)falsePositives / (NUM_QUERY / 2), theory);

    cudaFree(dBits); cudaFree(dInsert); cudaFree(dQuery); cudaFree(dMaybe); cudaFree(dPositives);
    free(hInsert); free(hQuery); free(hMaybe); free(hBits);
    return falseNegatives == 0 ? 0 : 1;
}
