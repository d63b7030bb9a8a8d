// Operations on a B-tree (B+ variant, fanout 32) built over 20000 keys:
// batched point lookups optimized for warp-cooperative search. A node holds
// up to 31 sorted keys, exactly one per lane, so a warp searches a node in a
// single step: __ballot_sync over "key <= query" gives the child slot via
// __popc, and a ballot over "key == query" decides membership at the leaf.
// The tree is built bottom-up on the host; 8192 queries (half present) are
// answered on the device, one warp per query.
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), \
                    __FILE__, __LINE__);                                       \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define FANOUT 32
#define KEYS_PER_NODE (FANOUT - 1)
#define NUM_KEYS 20000
#define NUM_QUERIES 8192
#define WARPS_PER_BLOCK 4

struct Node {
    int keys[FANOUT];      // KEYS_PER_NODE used; padding = INT_MAX
    int children[FANOUT];  // -1 in leaves
    int isLeaf;
};

__global__ void searchKernel(const Node* __restrict__ nodes, int root, const int* __restrict__ queries, int n,
                             int* __restrict__ found, int* __restrict__ depth) {
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (warp >= n) return;  // warp-uniform
    const int q = queries[warp];
    int node = root, d = 0;
    for (;;) {
        const Node& nd = nodes[node];
        const int k = (lane < KEYS_PER_NODE) ? nd.keys[lane] : INT_MAX;
        if (nd.isLeaf) {
            const unsigned int hit = __ballot_sync(0xffffffffu, k == q);
            if (lane == 0) {
                found[warp] = hit ? 1 : 0;
                depth[warp] = d;
            }
            return;
        }
        // separators[i] = smallest key of child i+1; child index = #separators <= q
        const unsigned int le = __ballot_sync(0xffffffffu, k <= q);
        node = nd.children[__popc(le)];
        ++d;
    }
}

int main() {
    std::vector<int> keys(NUM_KEYS);
    for (int i = 0; i < NUM_KEYS; ++i) keys[i] = 3 * i + 1 + (i % 7 == 0 ? 1 : 0);  // sorted, distinct
    std::vector<Node> nodes;

    // Leaves: chunks of 31 keys.
    std::vector<int> level, levelMin;
    for (int start = 0; start < NUM_KEYS; start += KEYS_PER_NODE) {
        Node nd;
        for (int j = 0; j < FANOUT; ++j) {
            const int idx = start + j;
            nd.keys[j] = (j < KEYS_PER_NODE && idx < NUM_KEYS) ? keys[idx] : INT_MAX;
            nd.children[j] = -1;
        }
        nd.isLeaf = 1;
        level.push_back((int)nodes.size());
        levelMin.push_back(keys[start]);
        nodes.push_back(nd);
    }
    int height = 1;
    // Internal levels: up to 32 children, separators = min key of children 1..31.
    while (level.size() > 1) {
        std::vector<int> up, upMin;
        for (size_t start = 0; start < level.size(); start += FANOUT) {
            Node nd;
            for (int j = 0; j < FANOUT; ++j) {
                const size_t c = start + j;
                nd.children[j] = c < level.size() ? level[c] : -1;
                nd.keys[j] = (j + 1 < FANOUT && start + j + 1 < level.size()) ? levelMin[start + j + 1] : INT_MAX;
            }
            nd.keys[KEYS_PER_NODE] = INT_MAX;
            nd.isLeaf = 0;
            up.push_back((int)nodes.size());
            upMin.push_back(levelMin[start]);
            nodes.push_back(nd);
        }
        level.swap(up);
        levelMin.swap(upMin);
        ++height;
    }
    const int root = level[0];

    std::vector<int> queries(NUM_QUERIES);
    for (int i = 0; i < NUM_QUERIES; ++i)
        queries[i] = (i % 2 == 0) ? keys[(i * 13) % NUM_KEYS] : 3 * ((i * 7) % NUM_KEYS);  // multiples of 3 are absent

    Node* dNodes;
    int *dQueries, *dFound, *dDepth;
    CUDA_CHECK(cudaMalloc(&dNodes, nodes.size() * sizeof(Node)));
    CUDA_CHECK(cudaMalloc(&dQueries, NUM_QUERIES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFound, NUM_QUERIES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dDepth, NUM_QUERIES * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dNodes, nodes.data(), nodes.size() * sizeof(Node), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dQueries, queries.data(), NUM_QUERIES * sizeof(int), cudaMemcpyHostToDevice));

    const int threads = WARPS_PER_BLOCK * 32;
    searchKernel<<<(NUM_QUERIES + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK, threads>>>(dNodes, root, dQueries,
                                                                                     NUM_QUERIES, dFound, dDepth);
    CUDA_CHECK(cudaGetLastError());
    std::vector<int> found(NUM_QUERIES), depth(NUM_QUERIES);
    CUDA_CHECK(cudaMemcpy(found.data(), dFound, NUM_QUERIES * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(depth.data(), dDepth, NUM_QUERIES * sizeof(int), cudaMemcpyDeviceToHost));

    int hits = 0, wrong = 0, badDepth = 0;
    for (int i = 0; i < NUM_QUERIES; ++i) {
        const bool present = std::binary_search(keys.begin(), keys.end(), queries[i]);
        hits += found[i];
        if ((found[i] != 0) != present) ++wrong;
        if (depth[i] != height - 1) ++badDepth;
    }
    printf("keys=%d nodes=%zu height=%d fanout=%d\n", NUM_KEYS, nodes.size(), height, FANOUT);
    printf("queries=%d hits=%d misses=%d\n", NUM_QUERIES, hits, NUM_QUERIES - hits);
    printf("wrong answers=%d, queries not ending at a leaf=%d\n", wrong, badDepth);

    cudaFree(dNodes); cudaFree(dQueries); cudaFree(dFound); cudaFree(dDepth);
    return (wrong == 0 && badDepth == 0) ? 0 : 1;
}
