// HIP port of ds_02_cuckoo_hash_exch/program.cu (cassbench reference translation).
//
// Cuckoo hash table with two sub-tables of 8192 slots each. Keys and values
// are packed into one 64-bit word so that a slot changes with a single
// atomicExch: an insert swaps its entry into its slot in one table, and
// whatever it evicts moves on to its slot in the other table, up to
// MAX_KICKS times before it goes to a small stash (atomicAdd on the stash
// size). Lookups probe both tables and the stash; a warp counts its hits
// with __ballot and __popcll. Slot placement depends on the order of the
// inserts, so only lookup results are printed.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <hip/hip_runtime.h>

#define HIP_CHECK(call)                                                        \
    do {                                                                       \
        hipError_t err = (call);                                               \
        if (err != hipSuccess) {                                               \
            fprintf(stderr, "HIP %s:%d: %s\n", __FILE__, __LINE__,             \
                    hipGetErrorString(err));                                   \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

typedef unsigned long long Entry;
const Entry EMPTY = ~0ull;          // key 0xffffffff is never inserted
const int TABLE_BITS = 13;
const int TABLE_SIZE = 1 << TABLE_BITS;
const int MAX_KICKS = 64;
const int STASH_SIZE = 256;
const int NUM_KEYS = 6000;
const int NUM_QUERIES = 8192;       // a multiple of the block size
const unsigned PRIME = 4294967291u;

struct HashParams {
    unsigned a[2], b[2];
};
__constant__ HashParams c_hash;

__device__ __host__ inline unsigned makeKey(unsigned i) { return (i * 2654435761u) ^ 0x5bd1e995u; }
__device__ __host__ inline unsigned valueFor(unsigned key) { return key * 7u + 1u; }
__device__ inline Entry pack(unsigned key, unsigned value) { return ((Entry)key << 32) | value; }

__device__ inline unsigned slotOf(int table, unsigned key) {
    const unsigned long long h = ((unsigned long long)c_hash.a[table] * key + c_hash.b[table]) % PRIME;
    return (unsigned)(h & (TABLE_SIZE - 1));
}

__global__ void insertKernel(Entry* tables, const unsigned* keys, int n, Entry* stash, int* stashCount) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Entry entry = pack(keys[i], valueFor(keys[i]));
    int table = 0;
    for (int kick = 0; kick < MAX_KICKS; ++kick) {
        const unsigned key = (unsigned)(entry >> 32);
        entry = atomicExch(&tables[table * TABLE_SIZE + slotOf(table, key)], entry);
        if (entry == EMPTY) return;
        table ^= 1;  // the evicted entry lived in this table: its other slot is in the other one
    }
    const int s = atomicAdd(stashCount, 1);
    if (s < STASH_SIZE) stash[s] = entry;
}

__global__ void lookupKernel(const Entry* tables, const Entry* stash, const int* stashCount,
                             const unsigned* queries, unsigned* results, int* hits) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned key = queries[i];
    unsigned result = 0xffffffffu;
    for (int table = 0; table < 2; ++table) {
        const Entry e = tables[table * TABLE_SIZE + slotOf(table, key)];
        if (e != EMPTY && (unsigned)(e >> 32) == key) result = (unsigned)e;
    }
    const int inStash = min(*stashCount, STASH_SIZE);
    for (int s = 0; s < inStash; ++s)
        if ((unsigned)(stash[s] >> 32) == key) result = (unsigned)stash[s];
    results[i] = result;
    const unsigned long long found = __ballot(result != 0xffffffffu);  // 64-bit mask in HIP
    if (threadIdx.x % warpSize == 0) atomicAdd(hits, (int)__popcll(found));
}

int main() {
    const HashParams params = {{2166136261u, 3339675911u}, {1442695041u, 2718281829u}};
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_hash), &params, sizeof(params)));
    std::vector<unsigned> keys(NUM_KEYS), queries(NUM_QUERIES);
    for (int i = 0; i < NUM_KEYS; ++i) keys[i] = makeKey(i);
    for (int q = 0; q < NUM_QUERIES; ++q)  // even: present, odd: never inserted
        queries[q] = (q % 2 == 0) ? makeKey((q * 3u) % NUM_KEYS) : makeKey(NUM_KEYS + q);

    Entry *dTables, *dStash;
    unsigned *dKeys, *dQueries, *dResults;
    int* dCounters;  // stash size, hits
    HIP_CHECK(hipMalloc(&dTables, 2 * TABLE_SIZE * sizeof(Entry)));
    HIP_CHECK(hipMalloc(&dStash, STASH_SIZE * sizeof(Entry)));
    HIP_CHECK(hipMalloc(&dKeys, NUM_KEYS * sizeof(unsigned)));
    HIP_CHECK(hipMalloc(&dQueries, NUM_QUERIES * sizeof(unsigned)));
    HIP_CHECK(hipMalloc(&dResults, NUM_QUERIES * sizeof(unsigned)));
    HIP_CHECK(hipMalloc(&dCounters, 2 * sizeof(int)));
    HIP_CHECK(hipMemset(dTables, 0xff, 2 * TABLE_SIZE * sizeof(Entry)));
    HIP_CHECK(hipMemset(dCounters, 0, 2 * sizeof(int)));
    HIP_CHECK(hipMemcpy(dKeys, keys.data(), NUM_KEYS * sizeof(unsigned), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dQueries, queries.data(), NUM_QUERIES * sizeof(unsigned), hipMemcpyHostToDevice));

    insertKernel<<<(NUM_KEYS + 127) / 128, 128>>>(dTables, dKeys, NUM_KEYS, dStash, dCounters);
    HIP_CHECK(hipGetLastError());
    lookupKernel<<<NUM_QUERIES / 128, 128>>>(dTables, dStash, dCounters, dQueries, dResults, dCounters + 1);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    int counters[2];
    std::vector<unsigned> results(NUM_QUERIES);
    std::vector<Entry> tables(2 * TABLE_SIZE);
    HIP_CHECK(hipMemcpy(counters, dCounters, sizeof(counters), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(results.data(), dResults, NUM_QUERIES * sizeof(unsigned), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(tables.data(), dTables, tables.size() * sizeof(Entry), hipMemcpyDeviceToHost));
    int occupied = 0;
    for (Entry e : tables) occupied += e != EMPTY;
    fprintf(stderr, "stash entries: %d, occupied slots: %d\n", counters[0], occupied);

    int found = 0, wrong = 0;
    unsigned long long valueSum = 0;
    for (int q = 0; q < NUM_QUERIES; ++q) {
        const bool present = q % 2 == 0;
        if (results[q] != 0xffffffffu) {
            ++found;
            valueSum += results[q];
        }
        if (present ? results[q] != valueFor(queries[q]) : results[q] != 0xffffffffu) ++wrong;
    }
    const bool stored = occupied + counters[0] == NUM_KEYS && counters[0] <= STASH_SIZE;
    printf("tables=2x%d keys=%d load factor=%.3f\n", TABLE_SIZE, NUM_KEYS, (double)NUM_KEYS / (2 * TABLE_SIZE));
    printf("every key stored once: %s\n", stored ? "yes" : "no");
    printf("queries=%d found=%d (warp ballot count %d) value sum=%llu\n", NUM_QUERIES, found, counters[1], valueSum);
    printf("wrong answers=%d\n", wrong);

    HIP_CHECK(hipFree(dTables)); HIP_CHECK(hipFree(dStash)); HIP_CHECK(hipFree(dKeys));
    HIP_CHECK(hipFree(dQueries)); HIP_CHECK(hipFree(dResults)); HIP_CHECK(hipFree(dCounters));
    return (wrong == 0 && stored && counters[1] == found) ? 0 : 1;
}
