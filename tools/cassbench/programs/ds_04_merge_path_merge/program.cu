// Stable merge of two sorted arrays (300000 and 200000 keys) with merge
// path. A partition kernel binary-searches the cross diagonals at block
// boundaries (one thread per block boundary, results in managed memory);
// each merge block then stages its slices of A and B in shared memory, every
// thread finds its own sub-diagonal in shared memory and merges 8 outputs
// sequentially. On equal keys A goes first, so the output must equal
// std::merge element for element, origin tags included.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                                   \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "CUDA error '%s' in %s at line %d\n", cudaGetErrorString(e_), \
                    #x, __LINE__);                                                      \
            exit(EXIT_FAILURE);                                                         \
        }                                                                               \
    } while (0)

const int A_COUNT = 300000;
const int B_COUNT = 200000;
const int THREADS = 128;
const int ITEMS = 8;
const int TILE = THREADS * ITEMS;
const int B_TAG = 1 << 30;  // origin tag: index in A, or B_TAG | index in B

// Number of A elements among the first diag outputs (A wins ties).
template <typename T>
__device__ __host__ int mergePath(const T* a, int aCount, const T* b, int bCount, int diag) {
    int lo = diag > bCount ? diag - bCount : 0;
    int hi = diag < aCount ? diag : aCount;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (!(b[diag - 1 - mid] < a[mid])) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

__global__ void partitionKernel(const int* a, const int* b, int* splits, int numSplits) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= numSplits) return;
    const int diag = min(s * TILE, A_COUNT + B_COUNT);
    splits[s] = mergePath(a, A_COUNT, b, B_COUNT, diag);
}

__global__ void mergeKernel(const int* a, const int* b, const int* splits, int* outKeys, int* outTags) {
    __shared__ int sA[TILE], sB[TILE];
    const int diag0 = blockIdx.x * TILE, diag1 = min(diag0 + TILE, A_COUNT + B_COUNT);
    const int a0 = splits[blockIdx.x], a1 = splits[blockIdx.x + 1];
    const int b0 = diag0 - a0, b1 = diag1 - a1;
    const int na = a1 - a0, nb = b1 - b0;
    for (int k = threadIdx.x; k < na; k += THREADS) sA[k] = a[a0 + k];
    for (int k = threadIdx.x; k < nb; k += THREADS) sB[k] = b[b0 + k];
    __syncthreads();
    const int local = min((int)threadIdx.x * ITEMS, na + nb);
    int i = mergePath(sA, na, sB, nb, local);
    int j = local - i;
    for (int k = 0; k < ITEMS && local + k < na + nb; ++k) {
        const bool takeA = j >= nb || (i < na && !(sB[j] < sA[i]));
        const int out = diag0 + local + k;
        if (takeA) {
            outKeys[out] = sA[i];
            outTags[out] = a0 + i;
            ++i;
        } else {
            outKeys[out] = sB[j];
            outTags[out] = B_TAG | (b0 + j);
            ++j;
        }
    }
}

int main() {
    std::vector<int> a(A_COUNT), b(B_COUNT);
    unsigned s = 777u;
    for (int& v : a) v = (int)((s = s * 1103515245u + 12345u) >> 12);  // 20-bit keys: many ties
    for (int& v : b) v = (int)((s = s * 1103515245u + 12345u) >> 12);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    const int total = A_COUNT + B_COUNT;
    const int blocks = (total + TILE - 1) / TILE;

    int *dA, *dB, *dKeys, *dTags, *splits;
    CUDA_CHECK(cudaMalloc(&dA, A_COUNT * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dB, B_COUNT * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dKeys, total * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dTags, total * sizeof(int)));
    CUDA_CHECK(cudaMallocManaged(&splits, (blocks + 1) * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dA, a.data(), A_COUNT * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, b.data(), B_COUNT * sizeof(int), cudaMemcpyHostToDevice));

    partitionKernel<<<(blocks + 1 + 127) / 128, 128>>>(dA, dB, splits, blocks + 1);
    CUDA_CHECK(cudaGetLastError());
    mergeKernel<<<blocks, THREADS>>>(dA, dB, splits, dKeys, dTags);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> keys(total), tags(total);
    CUDA_CHECK(cudaMemcpy(keys.data(), dKeys, total * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(tags.data(), dTags, total * sizeof(int), cudaMemcpyDeviceToHost));

    // CPU reference: std::merge of (key, tag) pairs compared by key only (stable, A first).
    std::vector<std::pair<int, int>> pa(A_COUNT), pb(B_COUNT), ref(total);
    for (int i = 0; i < A_COUNT; ++i) pa[i] = {a[i], i};
    for (int j = 0; j < B_COUNT; ++j) pb[j] = {b[j], B_TAG | j};
    std::merge(pa.begin(), pa.end(), pb.begin(), pb.end(), ref.begin(),
               [](const std::pair<int, int>& x, const std::pair<int, int>& y) { return x.first < y.first; });
    int mismatches = 0, hostSplitErrors = 0, fromAFirstHalf = 0;
    unsigned long long checksum = 0;
    for (int k = 0; k < total; ++k) {
        if (keys[k] != ref[k].first || tags[k] != ref[k].second) ++mismatches;
        if (k < total / 2 && !(tags[k] & B_TAG)) ++fromAFirstHalf;
        checksum = checksum * 1000003ull + (unsigned long long)keys[k];
    }
    for (int p = 0; p <= blocks; ++p)
        if (splits[p] != mergePath(a.data(), A_COUNT, b.data(), B_COUNT, std::min(p * TILE, total))) ++hostSplitErrors;
    printf("merged %d + %d keys in %d blocks of %d\n", A_COUNT, B_COUNT, blocks, TILE);
    printf("split of block 1: a=%d b=%d, split of block %d: a=%d b=%d\n", splits[1], TILE - splits[1], blocks / 2,
           splits[blocks / 2], (blocks / 2) * TILE - splits[blocks / 2]);
    printf("out[0]=%d out[%d]=%d out[%d]=%d from A in first half=%d\n", keys[0], total / 2, keys[total / 2],
           total - 1, keys[total - 1], fromAFirstHalf);
    printf("checksum=%016llx\n", checksum);
    printf("mismatches vs std::merge=%d split errors=%d\n", mismatches, hostSplitErrors);
    CUDA_CHECK(cudaFree(dA)); CUDA_CHECK(cudaFree(dB)); CUDA_CHECK(cudaFree(dKeys)); CUDA_CHECK(cudaFree(dTags));
    CUDA_CHECK(cudaFree(splits));
    return (mismatches == 0 && hostSplitErrors == 0) ? 0 : 1;
}
