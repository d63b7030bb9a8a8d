// Random-forest inference: 8 complete binary trees of depth 6 over 16 uint8
// features, four classes. Split nodes (feature, threshold) and leaf class
// scores live in constant memory as arrays of structs; a sample's features
// are loaded as four uchar4 vectors, and each tree is walked with implicit
// heap indexing (child = 2*node + 1 + goRight), unrolled by the DEPTH
// template parameter. Scores are integers, so the class sums and argmax
// match the CPU exactly. A grid-stride loop covers 20000 samples and a
// shared-memory histogram counts the predicted classes.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                            \
    do {                                                                            \
        cudaError_t err_ = (call);                                                  \
        if (err_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

const int TREES = 8, DEPTH = 6, FEATURES = 16, CLASSES = 4, SAMPLES = 20000;
const int SPLITS = (1 << DEPTH) - 1, LEAVES = 1 << DEPTH;

struct Split {
    unsigned char feature;
    unsigned char threshold;  // go right when x[feature] > threshold
};
struct Leaf {
    short score[CLASSES];
};

__constant__ Split c_splits[TREES * SPLITS];
__constant__ Leaf c_leaves[TREES * LEAVES];

template <int D>
__device__ int walkTree(const unsigned char* x, int tree) {
    int node = 0;
#pragma unroll
    for (int level = 0; level < D; ++level) {
        const Split sp = c_splits[tree * SPLITS + node];
        node = 2 * node + 1 + (x[sp.feature] > sp.threshold ? 1 : 0);
    }
    return node - SPLITS;
}

template <int D>
__global__ void predictForest(const uchar4* samples, int n, int* predicted, int* winningScore, unsigned* classCount) {
    __shared__ unsigned hist[CLASSES];
    if (threadIdx.x < CLASSES) hist[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned char x[FEATURES];
        for (int v = 0; v < FEATURES / 4; ++v) {
            const uchar4 q = samples[i * (FEATURES / 4) + v];
            x[4 * v] = q.x;
            x[4 * v + 1] = q.y;
            x[4 * v + 2] = q.z;
            x[4 * v + 3] = q.w;
        }
        int score[CLASSES] = {0, 0, 0, 0};
        for (int t = 0; t < TREES; ++t) {
            const Leaf& leaf = c_leaves[t * LEAVES + walkTree<D>(x, t)];
            for (int c = 0; c < CLASSES; ++c) score[c] += leaf.score[c];
        }
        int best = 0;
        for (int c = 1; c < CLASSES; ++c)
            if (score[c] > score[best]) best = c;
        predicted[i] = best;
        winningScore[i] = score[best];
        atomicAdd(&hist[best], 1u);
    }
    __syncthreads();
    if (threadIdx.x < CLASSES) atomicAdd(&classCount[threadIdx.x], hist[threadIdx.x]);
}

int main() {
    unsigned s = 31337u;
    auto rnd = [&s]() { return (s = s * 1103515245u + 12345u) >> 8; };
    std::vector<Split> splits(TREES * SPLITS);
    std::vector<Leaf> leaves(TREES * LEAVES);
    for (Split& sp : splits) {
        sp.feature = (unsigned char)(rnd() % FEATURES);
        sp.threshold = (unsigned char)(64 + rnd() % 128);
    }
    for (Leaf& lf : leaves)
        for (int c = 0; c < CLASSES; ++c) lf.score[c] = (short)((int)(rnd() % 2001) - 1000);
    std::vector<unsigned char> samples(SAMPLES * FEATURES);
    for (unsigned char& f : samples) f = (unsigned char)(rnd() & 255u);
    CUDA_CHECK(cudaMemcpyToSymbol(c_splits, splits.data(), splits.size() * sizeof(Split)));
    CUDA_CHECK(cudaMemcpyToSymbol(c_leaves, leaves.data(), leaves.size() * sizeof(Leaf)));

    uchar4* dSamples;
    int *dPred, *dScore;
    unsigned* dCount;
    CUDA_CHECK(cudaMalloc(&dSamples, samples.size()));
    CUDA_CHECK(cudaMalloc(&dPred, SAMPLES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dScore, SAMPLES * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dCount, CLASSES * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(dSamples, samples.data(), samples.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dCount, 0, CLASSES * sizeof(unsigned)));
    predictForest<DEPTH><<<40, 128>>>(dSamples, SAMPLES, dPred, dScore, dCount);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> pred(SAMPLES), score(SAMPLES);
    unsigned count[CLASSES];
    CUDA_CHECK(cudaMemcpy(pred.data(), dPred, SAMPLES * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(score.data(), dScore, SAMPLES * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(count, dCount, sizeof(count), cudaMemcpyDeviceToHost));

    // CPU reference: the same walk with explicit child indices.
    int mismatches = 0;
    long long scoreSum = 0;
    unsigned refCount[CLASSES] = {0, 0, 0, 0};
    for (int i = 0; i < SAMPLES; ++i) {
        const unsigned char* x = &samples[i * FEATURES];
        int total[CLASSES] = {0, 0, 0, 0};
        for (int t = 0; t < TREES; ++t) {
            int node = 0;
            while (node < SPLITS) {
                const Split& sp = splits[t * SPLITS + node];
                node = x[sp.feature] > sp.threshold ? 2 * node + 2 : 2 * node + 1;
            }
            for (int c = 0; c < CLASSES; ++c) total[c] += leaves[t * LEAVES + node - SPLITS].score[c];
        }
        int best = 0;
        for (int c = 1; c < CLASSES; ++c)
            if (total[c] > total[best]) best = c;
        ++refCount[best];
        if (pred[i] != best || score[i] != total[best]) ++mismatches;
        scoreSum += score[i];
    }
    bool countsOk = true;
    for (int c = 0; c < CLASSES; ++c) countsOk = countsOk && count[c] == refCount[c];
    printf("trees=%d depth=%d features=%d samples=%d\n", TREES, DEPTH, FEATURES, SAMPLES);
    printf("predicted classes: %u %u %u %u\n", count[0], count[1], count[2], count[3]);
    printf("winning score sum=%lld sample 0: class %d score %d\n", scoreSum, pred[0], score[0]);
    printf("mismatches vs CPU=%d histogram %s\n", mismatches, countsOk ? "ok" : "wrong");
    CUDA_CHECK(cudaFree(dSamples)); CUDA_CHECK(cudaFree(dPred)); CUDA_CHECK(cudaFree(dScore)); CUDA_CHECK(cudaFree(dCount));
    return (mismatches == 0 && countsOk) ? 0 : 1;
}
