// HIP port of ds_03_trie_longest_prefix/program.cu (cassbench reference translation).
//
// Longest-prefix match (IPv4 routing) in a multibit trie with a stride of 4
// bits: each node holds 16 children and 16 expanded route entries (controlled
// prefix expansion; an entry packs the next hop and the prefix length, and a
// longer prefix wins inside a node). The trie is built on the host from 2000
// distinct prefixes and flattened into an array of structs; a grid-stride
// kernel walks it for 16384 addresses with the root node cached in shared
// memory, and counts matches per prefix-length class with shared atomics.
// The host checks every answer against a linear scan of all prefixes.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <set>
#include <utility>
#include <hip/hip_runtime.h>

#define CHECK(call)                                                                     \
    {                                                                                   \
        const hipError_t error = call;                                                  \
        if (error != hipSuccess) {                                                      \
            fprintf(stderr, "Error: %s:%d, code:%d, reason: %s\n", __FILE__, __LINE__,  \
                    error, hipGetErrorString(error));                                   \
            exit(1);                                                                    \
        }                                                                               \
    }

const int STRIDE = 4;
const int FANOUT = 1 << STRIDE;
const int NUM_PREFIXES = 2000;
const int NUM_QUERIES = 16384;
const int CLASSES = 5;  // no route, /8-/15, /16-/23, /24-/31, /32

struct TrieNode {
    int child[FANOUT];        // -1: none
    unsigned entry[FANOUT];   // (hop << 8) | length, 0: none
};

__device__ __host__ inline int lengthClass(unsigned entry) {
    const unsigned len = entry & 255u;
    return entry == 0 ? 0 : (len == 32 ? 4 : (int)(len / 8));
}

__global__ void lookupKernel(const TrieNode* nodes, const unsigned* addrs, unsigned* result, int n,
                             unsigned* classCounts) {
    __shared__ TrieNode root;
    __shared__ unsigned counts[CLASSES];
    if (threadIdx.x < FANOUT) {
        root.child[threadIdx.x] = nodes[0].child[threadIdx.x];
        root.entry[threadIdx.x] = nodes[0].entry[threadIdx.x];
    }
    if (threadIdx.x < CLASSES) counts[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        const unsigned addr = addrs[i];
        unsigned nib = addr >> 28;
        unsigned best = root.entry[nib];
        int node = root.child[nib];
        for (int level = 1; node >= 0 && level < 32 / STRIDE; ++level) {
            nib = (addr >> (28 - STRIDE * level)) & (FANOUT - 1);
            const unsigned e = nodes[node].entry[nib];
            if (e != 0) best = e;
            node = nodes[node].child[nib];
        }
        result[i] = best;
        atomicAdd(&counts[lengthClass(best)], 1u);
    }
    __syncthreads();
    if (threadIdx.x < CLASSES) atomicAdd(&classCounts[threadIdx.x], counts[threadIdx.x]);
}

static int newNode(std::vector<TrieNode>& nodes) {
    TrieNode t;
    for (int k = 0; k < FANOUT; ++k) {
        t.child[k] = -1;
        t.entry[k] = 0;
    }
    nodes.push_back(t);
    return (int)nodes.size() - 1;
}

static void insertPrefix(std::vector<TrieNode>& nodes, unsigned addr, int len, unsigned hop) {
    int node = 0, level = 0;
    for (; len > STRIDE * (level + 1); ++level) {
        const unsigned nib = (addr >> (28 - STRIDE * level)) & (FANOUT - 1);
        if (nodes[node].child[nib] < 0) {
            const int c = newNode(nodes);  // may reallocate: index again below
            nodes[node].child[nib] = c;
        }
        node = nodes[node].child[nib];
    }
    const int spare = STRIDE * (level + 1) - len;  // unspecified low bits of this nibble
    const unsigned first = ((addr >> (28 - STRIDE * level)) & (FANOUT - 1)) & ~((1u << spare) - 1u);
    for (unsigned j = 0; j < (1u << spare); ++j) {
        unsigned& e = nodes[node].entry[first | j];
        if (e == 0 || (int)(e & 255u) <= len) e = (hop << 8) | (unsigned)len;
    }
}

static unsigned lcg(unsigned& s) { return s = s * 1664525u + 1013904223u; }

int main() {
    const unsigned topBytes[6] = {10u, 172u, 192u, 100u, 203u, 45u};
    unsigned seed = 12345u;
    std::vector<std::pair<unsigned, int>> prefixes;
    std::set<std::pair<unsigned, int>> seen;
    while ((int)prefixes.size() < NUM_PREFIXES) {
        const unsigned r = lcg(seed);
        const int len = 8 + (int)((lcg(seed) >> 8) % 25);  // 8..32
        const unsigned addr = (topBytes[(r >> 29) % 6] << 24) | (lcg(seed) >> 8);
        const unsigned mask = len == 32 ? 0xffffffffu : ~(0xffffffffu >> len);
        if (seen.insert({addr & mask, len}).second) prefixes.push_back({addr & mask, len});
    }
    std::vector<TrieNode> nodes;
    newNode(nodes);
    for (int p = 0; p < NUM_PREFIXES; ++p) insertPrefix(nodes, prefixes[p].first, prefixes[p].second, p + 1);

    std::vector<unsigned> addrs(NUM_QUERIES);
    for (int q = 0; q < NUM_QUERIES; ++q) {
        const unsigned r = lcg(seed);
        if (q % 2 == 0) {  // inside a known prefix
            const std::pair<unsigned, int>& p = prefixes[(r >> 8) % NUM_PREFIXES];
            const unsigned low = p.second == 32 ? 0u : (lcg(seed) & (0xffffffffu >> p.second));
            addrs[q] = p.first | low;
        } else {
            addrs[q] = (topBytes[(r >> 29) % 6] << 24) ^ (lcg(seed) >> (r & 7));
        }
    }

    TrieNode* dNodes;
    unsigned *dAddrs, *dResult, *dCounts;
    CHECK(hipMalloc(&dNodes, nodes.size() * sizeof(TrieNode)));
    CHECK(hipMalloc(&dAddrs, NUM_QUERIES * sizeof(unsigned)));
    CHECK(hipMalloc(&dResult, NUM_QUERIES * sizeof(unsigned)));
    CHECK(hipMalloc(&dCounts, CLASSES * sizeof(unsigned)));
    CHECK(hipMemcpy(dNodes, nodes.data(), nodes.size() * sizeof(TrieNode), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dAddrs, addrs.data(), NUM_QUERIES * sizeof(unsigned), hipMemcpyHostToDevice));
    CHECK(hipMemset(dCounts, 0, CLASSES * sizeof(unsigned)));
    lookupKernel<<<32, 128>>>(dNodes, dAddrs, dResult, NUM_QUERIES, dCounts);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    std::vector<unsigned> result(NUM_QUERIES);
    unsigned counts[CLASSES];
    CHECK(hipMemcpy(result.data(), dResult, NUM_QUERIES * sizeof(unsigned), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(counts, dCounts, sizeof(counts), hipMemcpyDeviceToHost));

    int wrong = 0;
    unsigned long long hopSum = 0;
    unsigned refCounts[CLASSES] = {0, 0, 0, 0, 0};
    for (int q = 0; q < NUM_QUERIES; ++q) {
        unsigned best = 0;
        for (int p = 0; p < NUM_PREFIXES; ++p) {
            const int len = prefixes[p].second;
            const unsigned mask = len == 32 ? 0xffffffffu : ~(0xffffffffu >> len);
            if ((addrs[q] & mask) == prefixes[p].first && len > (int)(best & 255u)) best = ((p + 1u) << 8) | len;
        }
        refCounts[lengthClass(best)]++;
        if (result[q] != best) ++wrong;
        hopSum += result[q] >> 8;
    }
    bool countsOk = true;
    for (int c = 0; c < CLASSES; ++c) countsOk = countsOk && counts[c] == refCounts[c];
    printf("prefixes=%d trie nodes=%zu (%zu bytes)\n", NUM_PREFIXES, nodes.size(), nodes.size() * sizeof(TrieNode));
    printf("queries=%d no route=%u /8-/15=%u /16-/23=%u /24-/31=%u /32=%u\n", NUM_QUERIES, counts[0], counts[1],
           counts[2], counts[3], counts[4]);
    printf("next-hop sum=%llu\n", hopSum);
    printf("mismatches vs linear scan=%d class counts %s\n", wrong, countsOk ? "match" : "differ");
    CHECK(hipFree(dNodes)); CHECK(hipFree(dAddrs)); CHECK(hipFree(dResult)); CHECK(hipFree(dCounts));
    return (wrong == 0 && countsOk) ? 0 : 1;
}
