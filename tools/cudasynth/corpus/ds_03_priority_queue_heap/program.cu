// Priority queue with 4095 elements stored as a binary min-heap, focused on
// parallel construction: Floyd's bottom-up heapify processes one tree level
// per kernel launch, and within a level every node is sifted down by its own
// thread (the subtrees of nodes on one level are disjoint, so no locks are
// needed). The heap property is then verified in parallel (violations
// counted with atomicAdd), and a batch of extract-min operations runs on the
// device. The heap code is a template over the key type.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
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

#define LEVELS 12
#define HEAP_SIZE ((1 << LEVELS) - 1)  // 4095: a complete tree
#define EXTRACT 16

template <typename Key>
__device__ void siftDown(Key* heap, int i, int n) {
    for (;;) {
        const int l = 2 * i + 1, r = l + 1;
        int smallest = i;
        if (l < n && heap[l] < heap[smallest]) smallest = l;
        if (r < n && heap[r] < heap[smallest]) smallest = r;
        if (smallest == i) return;
        const Key t = heap[i];
        heap[i] = heap[smallest];
        heap[smallest] = t;
        i = smallest;
    }
}

// Sift down every node of one level: nodes [first, first + count).
template <typename Key>
__global__ void heapifyLevel(Key* heap, int first, int count, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < count) siftDown(heap, first + t, n);
}

template <typename Key>
__global__ void countViolations(const Key* heap, int n, int* violations) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n && heap[i] < heap[(i - 1) / 2]) atomicAdd(violations, 1);
}

// Sequential extract-min batch (single thread): the root is removed k times.
template <typename Key>
__global__ void extractMin(Key* heap, int n, int k, Key* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int j = 0; j < k; ++j) {
        out[j] = heap[0];
        heap[0] = heap[n - 1 - j];
        siftDown(heap, 0, n - 1 - j);
    }
}

int main() {
    std::vector<int> keys(HEAP_SIZE);
    unsigned int s = 12345u;
    for (int i = 0; i < HEAP_SIZE; ++i) {
        s = s * 1103515245u + 12345u;
        keys[i] = (int)((s >> 4) % 100000) - 50000;
    }

    int *dHeap, *dViolations, *dOut;
    CUDA_CHECK(cudaMalloc(&dHeap, HEAP_SIZE * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dViolations, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dOut, EXTRACT * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dHeap, keys.data(), HEAP_SIZE * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dViolations, 0, sizeof(int)));

    // Levels LEVELS-2 .. 0 (leaves are already heaps).
    for (int level = LEVELS - 2; level >= 0; --level) {
        const int first = (1 << level) - 1, count = 1 << level;
        heapifyLevel<int><<<(count + 255) / 256, 256>>>(dHeap, first, count, HEAP_SIZE);
    }
    countViolations<int><<<(HEAP_SIZE + 255) / 256, 256>>>(dHeap, HEAP_SIZE, dViolations);
    CUDA_CHECK(cudaGetLastError());

    int violations = 0;
    std::vector<int> heap(HEAP_SIZE);
    CUDA_CHECK(cudaMemcpy(&violations, dViolations, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(heap.data(), dHeap, HEAP_SIZE * sizeof(int), cudaMemcpyDeviceToHost));

    extractMin<int><<<1, 1>>>(dHeap, HEAP_SIZE, EXTRACT, dOut);
    CUDA_CHECK(cudaGetLastError());
    int extracted[EXTRACT];
    CUDA_CHECK(cudaMemcpy(extracted, dOut, sizeof(extracted), cudaMemcpyDeviceToHost));

    std::vector<int> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const bool topOk = std::equal(extracted, extracted + EXTRACT, sorted.begin());

    printf("heap size=%d levels=%d\n", HEAP_SIZE, LEVELS);
    printf("heap[0..6] = %d %d %d %d %d %d %d\n", heap[0], heap[1], heap[2], heap[3], heap[4], heap[5], heap[6]);
    printf("heap property violations=%d\n", violations);
    printf("extracted %d smallest:", EXTRACT);
    for (int j = 0; j < EXTRACT; ++j) printf(" %d", extracted[j]);
    printf("\nmatches sorted order: %s\n", topOk ? "yes" : "no");

    cudaFree(dHeap);
    cudaFree(dViolations);
    cudaFree(dOut);
    return (violations == 0 && topOk) ? 0 : 1;
}
