// Skip list operations with 4096 elements, focused on read-mostly
// concurrency with unified memory: the skip list (keys, per-level forward
// indices) is built by the host directly in cudaMallocManaged memory, then
// 8192 concurrent searches run on the GPU, one thread each, with the usual
// top-down walk. Node levels come from a deterministic hash (p = 1/2), so
// the structure and the number of steps per search are reproducible.
#include <cstdio>
#include <cstdlib>
#include <climits>
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

#define NUM_ELEMS 4096
#define MAX_LEVEL 14
#define NUM_QUERIES 8192
#define HEAD 0  // node 0 is the head sentinel
#define NIL (-1)

struct SkipList {
    int key[NUM_ELEMS + 1];
    int value[NUM_ELEMS + 1];
    int next[MAX_LEVEL][NUM_ELEMS + 1];
    int levels;  // number of levels in use
};

static int levelFor(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    int lvl = 1;
    while ((x & 1u) && lvl < MAX_LEVEL) {
        ++lvl;
        x >>= 1;
    }
    return lvl;
}

__global__ void searchKernel(const SkipList* list, const int* queries, int n, int* results, int* steps) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const int q = queries[t];
    int node = HEAD, count = 0;
    for (int lvl = list->levels - 1; lvl >= 0; --lvl) {
        int nxt = list->next[lvl][node];
        while (nxt != NIL && list->key[nxt] < q) {
            node = nxt;
            nxt = list->next[lvl][node];
            ++count;
        }
        ++count;  // drop down one level
    }
    const int cand = list->next[0][node];
    results[t] = (cand != NIL && list->key[cand] == q) ? list->value[cand] : -1;
    steps[t] = count;
}

int main() {
    SkipList* list;
    int *queries, *results, *steps;
    CUDA_CHECK(cudaMallocManaged(&list, sizeof(SkipList)));
    CUDA_CHECK(cudaMallocManaged(&queries, NUM_QUERIES * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&results, NUM_QUERIES * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&steps, NUM_QUERIES * sizeof(int)));

    // Build: keys 10, 20, ..., inserted in sorted order, so each level is
    // linked by remembering the last node seen on that level.
    int last[MAX_LEVEL];
    list->key[HEAD] = INT_MIN;
    list->value[HEAD] = -1;
    list->levels = 1;
    for (int l = 0; l < MAX_LEVEL; ++l) {
        list->next[l][HEAD] = NIL;
        last[l] = HEAD;
    }
    for (int i = 1; i <= NUM_ELEMS; ++i) {
        list->key[i] = 10 * i;
        list->value[i] = i * i % 9973;
        const int lvl = levelFor((unsigned int)i);
        if (lvl > list->levels) list->levels = lvl;
        for (int l = 0; l < MAX_LEVEL; ++l) list->next[l][i] = NIL;
        for (int l = 0; l < lvl; ++l) {
            list->next[l][last[l]] = i;
            last[l] = i;
        }
    }
    for (int t = 0; t < NUM_QUERIES; ++t) queries[t] = (t % 2 == 0) ? 10 * (1 + (t * 7) % NUM_ELEMS) : 10 * (t % 5000) + 5;

    searchKernel<<<(NUM_QUERIES + 127) / 128, 128>>>(list, queries, NUM_QUERIES, results, steps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    int found = 0, wrong = 0;
    long long totalSteps = 0, valueSum = 0;
    int maxSteps = 0;
    for (int t = 0; t < NUM_QUERIES; ++t) {
        const int q = queries[t];
        const bool present = q % 10 == 0 && q >= 10 && q <= 10 * NUM_ELEMS;
        const int expect = present ? (q / 10) * (q / 10) % 9973 : -1;
        if (results[t] != expect) ++wrong;
        if (results[t] >= 0) {
            ++found;
            valueSum += results[t];
        }
        totalSteps += steps[t];
        if (steps[t] > maxSteps) maxSteps = steps[t];
    }
    int perLevel[MAX_LEVEL] = {0};
    for (int l = 0; l < list->levels; ++l)
        for (int node = list->next[l][HEAD]; node != NIL; node = list->next[l][node]) perLevel[l]++;

    printf("elements=%d levels=%d\n", NUM_ELEMS, list->levels);
    printf("nodes per level:");
    for (int l = 0; l < list->levels; ++l) printf(" %d", perLevel[l]);
    printf("\nqueries=%d found=%d value sum=%lld\n", NUM_QUERIES, found, valueSum);
    printf("average steps=%.3f max steps=%d (a linked list would need up to %d)\n", (double)totalSteps / NUM_QUERIES,
           maxSteps, NUM_ELEMS);
    printf("wrong answers=%d\n", wrong);

    cudaFree(list);
    cudaFree(queries);
    cudaFree(results);
    cudaFree(steps);
    return wrong == 0 ? 0 : 1;
}
