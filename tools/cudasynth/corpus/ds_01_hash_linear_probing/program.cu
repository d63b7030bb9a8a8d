// Hash table with 4096 buckets using open addressing with linear probing,
// focused on lock-free concurrent inserts: a thread claims an empty slot
// with atomicCAS on the key word (EMPTY -> key), or finds its key already
// present, then writes the value. Lookups probe until they hit the key or an
// empty slot. 2500 inserts (with duplicates) and 4096 lookups (half of them
// for absent keys) run in parallel; results that do not depend on the order
// of the inserts are printed, probe statistics go to stderr.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <set>
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

#define CAPACITY 4096  // power of two
#define EMPTY 0u       // keys are never 0
#define NUM_INSERTS 2500
#define NUM_LOOKUPS 4096

struct Slot {
    unsigned int key;
    unsigned int value;
};

__host__ __device__ inline unsigned int hashKey(unsigned int k) {
    k ^= k >> 16;
    k *= 0x45d9f3bu;
    k ^= k >> 16;
    return k & (CAPACITY - 1);
}

__host__ __device__ inline unsigned int valueOf(unsigned int key) { return key * 2654435761u >> 8; }

__global__ void insertKernel(Slot* table, const unsigned int* keys, int n, int* newKeys, int* probes) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int key = keys[i];
    unsigned int slot = hashKey(key);
    for (int attempt = 0; attempt < CAPACITY; ++attempt) {
        const unsigned int prev = atomicCAS(&table[slot].key, EMPTY, key);
        if (prev == EMPTY || prev == key) {
            table[slot].value = valueOf(key);  // same value for duplicates: order does not matter
            if (prev == EMPTY) atomicAdd(newKeys, 1);
            atomicAdd(probes, attempt + 1);
            return;
        }
        slot = (slot + 1) & (CAPACITY - 1);
    }
}

__global__ void lookupKernel(const Slot* table, const unsigned int* queries, int n, unsigned int* results,
                             int* probes) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int key = queries[i];
    unsigned int slot = hashKey(key);
    unsigned int result = 0xffffffffu;  // not found
    int attempt = 0;
    for (; attempt < CAPACITY; ++attempt) {
        const unsigned int k = table[slot].key;
        if (k == key) {
            result = table[slot].value;
            break;
        }
        if (k == EMPTY) break;
        slot = (slot + 1) & (CAPACITY - 1);
    }
    results[i] = result;
    atomicAdd(probes, attempt + 1);
}

int main() {
    std::vector<unsigned int> keys(NUM_INSERTS), queries(NUM_LOOKUPS);
    for (int i = 0; i < NUM_INSERTS; ++i) keys[i] = 1u + (unsigned int)((i % 2048) * 7919u + 13u);  // 452 duplicates
    for (int i = 0; i < NUM_LOOKUPS; ++i)
        queries[i] = (i % 2 == 0) ? keys[(i * 5) % NUM_INSERTS] : 1u + (unsigned int)(i * 7919u + 5u);  // odd: absent

    Slot* dTable;
    unsigned int *dKeys, *dQueries, *dResults;
    int *dNew, *dProbes;
    CUDA_CHECK(cudaMalloc(&dTable, CAPACITY * sizeof(Slot)));
    CUDA_CHECK(cudaMalloc(&dKeys, NUM_INSERTS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dQueries, NUM_LOOKUPS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dResults, NUM_LOOKUPS * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dNew, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dProbes, 2 * sizeof(int)));
    CUDA_CHECK(cudaMemset(dTable, 0, CAPACITY * sizeof(Slot)));
    CUDA_CHECK(cudaMemset(dNew, 0, sizeof(int)));
    CUDA_CHECK(cudaMemset(dProbes, 0, 2 * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dKeys, keys.data(), NUM_INSERTS * sizeof(unsigned int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dQueries, queries.data(), NUM_LOOKUPS * sizeof(unsigned int), cudaMemcpyHostToDevice));

    insertKernel<<<(NUM_INSERTS + 255) / 256, 256>>>(dTable, dKeys, NUM_INSERTS, dNew, dProbes);
    lookupKernel<<<(NUM_LOOKUPS + 255) / 256, 256>>>(dTable, dQueries, NUM_LOOKUPS, dResults, dProbes + 1);
    CUDA_CHECK(cudaGetLastError());

    int newKeys = 0, probes[2];
    std::vector<unsigned int> results(NUM_LOOKUPS);
    CUDA_CHECK(cudaMemcpy(&newKeys, dNew, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(probes, dProbes, sizeof(probes), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(results.data(), dResults, NUM_LOOKUPS * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    fprintf(stderr, "average probes: insert %.3f lookup %.3f\n", (double)probes[0] / NUM_INSERTS,
            (double)probes[1] / NUM_LOOKUPS);

    const std::set<unsigned int> truth(keys.begin(), keys.end());
    int found = 0, wrong = 0;
    unsigned long long valueSum = 0;
    for (int i = 0; i < NUM_LOOKUPS; ++i) {
        const bool present = truth.count(queries[i]) > 0;
        if (results[i] != 0xffffffffu) {
            ++found;
            valueSum += results[i];
            if (!present || results[i] != valueOf(queries[i])) ++wrong;
        } else if (present) {
            ++wrong;
        }
    }
    printf("buckets=%d inserts=%d distinct keys=%d (host %zu) load factor=%.3f\n", CAPACITY, NUM_INSERTS, newKeys,
           truth.size(), (double)newKeys / CAPACITY);
    printf("lookups=%d found=%d value sum=%llu\n", NUM_LOOKUPS, found, valueSum);
    printf("wrong answers=%d\n", wrong);

    cudaFree(dTable); cudaFree(dKeys); cudaFree(dQueries); cudaFree(dResults); cudaFree(dNew); cudaFree(dProbes);
    return (wrong == 0 && newKeys == (int)truth.size()) ? 0 : 1;
}
