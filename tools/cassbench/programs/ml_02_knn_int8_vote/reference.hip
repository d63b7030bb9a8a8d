// HIP port of ml_02_knn_int8_vote/program.cu (cassbench reference translation).
//
// k-nearest-neighbour classification (k = 5) of 1024 queries against 2048
// labelled training points with 32 int8 features, eight classes. Squared
// Euclidean distances are exact integers; a neighbour's key packs distance
// and training index, so ties resolve the same way everywhere. Each thread
// keeps its sorted top-k list in registers while the training set streams
// through shared memory in tiles; the vote takes the most frequent label
// (smallest label on a tie). The queries go in two halves on two streams
// from pinned host memory. The host recomputes every prediction.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <utility>
#include <hip/hip_runtime.h>

#define HIP_CHECK(call)                                                                   \
    do {                                                                                  \
        hipError_t e = (call);                                                            \
        if (e != hipSuccess) {                                                            \
            fprintf(stderr, "HIP error %d (%s) at %s:%d\n", (int)e, hipGetErrorString(e), \
                    __FILE__, __LINE__);                                                  \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

const int DIM = 32, NUM_TRAIN = 2048, NUM_QUERY = 1024, CLASSES = 8, KNN = 5;
const int TILE = 128, THREADS = 128, NUM_STREAMS = 2;

struct Prediction {
    int label;
    unsigned nearest;  // packed key of the nearest neighbour
};

__device__ __host__ inline unsigned packKey(int dist, int index) { return (unsigned)dist * NUM_TRAIN + (unsigned)index; }

__device__ __host__ inline int vote(const unsigned* keys, const int* labels) {
    int counts[CLASSES] = {0};
    for (int j = 0; j < KNN; ++j) counts[labels[keys[j] % NUM_TRAIN]]++;
    int best = 0;
    for (int c = 1; c < CLASSES; ++c)
        if (counts[c] > counts[best]) best = c;
    return best;
}

__global__ void knnKernel(const int8_t* train, const int* labels, const int8_t* queries, int numQueries,
                          Prediction* out) {
    __shared__ int8_t tile[TILE][DIM];
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    int8_t mine[DIM];
    for (int d = 0; d < DIM; ++d) mine[d] = q < numQueries ? queries[q * DIM + d] : 0;
    unsigned best[KNN];
    for (int j = 0; j < KNN; ++j) best[j] = 0xffffffffu;
    for (int base = 0; base < NUM_TRAIN; base += TILE) {
        for (int k = threadIdx.x; k < TILE * DIM; k += blockDim.x) tile[k / DIM][k % DIM] = train[base * DIM + k];
        __syncthreads();
        for (int t = 0; t < TILE; ++t) {
            int dist = 0;
            for (int d = 0; d < DIM; ++d) {
                const int diff = (int)mine[d] - (int)tile[t][d];
                dist += diff * diff;
            }
            unsigned key = packKey(dist, base + t);
            for (int j = 0; j < KNN; ++j)  // insertion into the sorted list
                if (key < best[j]) {
                    const unsigned tmp = best[j];
                    best[j] = key;
                    key = tmp;
                }
        }
        __syncthreads();
    }
    if (q < numQueries) {
        out[q].label = vote(best, labels);
        out[q].nearest = best[0];
    }
}

int main() {
    uint32_t s = 1u;
    auto rnd = [&s]() { return s = s * 747796405u + 2891336453u; };
    std::vector<int8_t> centers(CLASSES * DIM);
    for (auto& c : centers) c = (int8_t)((int)((rnd() >> 16) % 161) - 80);
    auto sample = [&](int8_t* x, int cls) {
        for (int d = 0; d < DIM; ++d) {
            const int v = centers[cls * DIM + d] + (int)((rnd() >> 16) % 141) - 70;
            x[d] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
        }
    };
    std::vector<int8_t> train(NUM_TRAIN * DIM);
    std::vector<int> labels(NUM_TRAIN), truth(NUM_QUERY);
    for (int i = 0; i < NUM_TRAIN; ++i) sample(&train[i * DIM], labels[i] = (int)((rnd() >> 20) % CLASSES));
    int8_t* queries;
    Prediction* preds;
    HIP_CHECK(hipHostMalloc(&queries, NUM_QUERY * DIM));
    HIP_CHECK(hipHostMalloc(&preds, NUM_QUERY * sizeof(Prediction)));
    for (int q = 0; q < NUM_QUERY; ++q) sample(&queries[q * DIM], truth[q] = (int)((rnd() >> 20) % CLASSES));

    int8_t *dTrain, *dQueries;
    int* dLabels;
    Prediction* dPreds;
    HIP_CHECK(hipMalloc(&dTrain, train.size()));
    HIP_CHECK(hipMalloc(&dLabels, NUM_TRAIN * sizeof(int)));
    HIP_CHECK(hipMalloc(&dQueries, NUM_QUERY * DIM));
    HIP_CHECK(hipMalloc(&dPreds, NUM_QUERY * sizeof(Prediction)));
    HIP_CHECK(hipMemcpy(dTrain, train.data(), train.size(), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dLabels, labels.data(), NUM_TRAIN * sizeof(int), hipMemcpyHostToDevice));

    hipStream_t streams[NUM_STREAMS];
    hipEvent_t start, stop;
    for (int i = 0; i < NUM_STREAMS; ++i) HIP_CHECK(hipStreamCreate(&streams[i]));
    HIP_CHECK(hipEventCreate(&start));
    HIP_CHECK(hipEventCreate(&stop));
    HIP_CHECK(hipEventRecord(start));
    const int chunk = NUM_QUERY / NUM_STREAMS;
    for (int i = 0; i < NUM_STREAMS; ++i) {
        const int off = i * chunk;
        HIP_CHECK(hipMemcpyAsync(dQueries + off * DIM, queries + off * DIM, chunk * DIM, hipMemcpyHostToDevice, streams[i]));
        knnKernel<<<(chunk + THREADS - 1) / THREADS, THREADS, 0, streams[i]>>>(dTrain, dLabels, dQueries + off * DIM,
                                                                              chunk, dPreds + off);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipMemcpyAsync(preds + off, dPreds + off, chunk * sizeof(Prediction), hipMemcpyDeviceToHost, streams[i]));
    }
    HIP_CHECK(hipEventRecord(stop));
    HIP_CHECK(hipDeviceSynchronize());
    float ms = 0;
    HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
    fprintf(stderr, "knn on %d streams: %.3f ms\n", NUM_STREAMS, ms);

    int mismatches = 0, correct = 0, perClass[CLASSES] = {0};
    unsigned long long nearestSum = 0;
    for (int q = 0; q < NUM_QUERY; ++q) {
        unsigned best[KNN];
        for (int j = 0; j < KNN; ++j) best[j] = 0xffffffffu;
        for (int i = 0; i < NUM_TRAIN; ++i) {
            int dist = 0;
            for (int d = 0; d < DIM; ++d) {
                const int diff = queries[q * DIM + d] - train[i * DIM + d];
                dist += diff * diff;
            }
            unsigned key = packKey(dist, i);
            for (int j = 0; j < KNN; ++j)
                if (key < best[j]) std::swap(key, best[j]);
        }
        if (preds[q].label != vote(best, labels.data()) || preds[q].nearest != best[0]) ++mismatches;
        if (preds[q].label == truth[q]) ++correct, ++perClass[truth[q]];
        nearestSum += preds[q].nearest / NUM_TRAIN;
    }
    printf("train=%d queries=%d dim=%d k=%d\n", NUM_TRAIN, NUM_QUERY, DIM, KNN);
    printf("accuracy=%d/%d per class:", correct, NUM_QUERY);
    for (int c = 0; c < CLASSES; ++c) printf(" %d", perClass[c]);
    printf("\nnearest distance sum=%llu query 0: label %d nearest #%u\n", nearestSum, preds[0].label,
           preds[0].nearest % NUM_TRAIN);
    printf("mismatches vs CPU=%d\n", mismatches);
    for (int i = 0; i < NUM_STREAMS; ++i) HIP_CHECK(hipStreamDestroy(streams[i]));
    HIP_CHECK(hipEventDestroy(start)); HIP_CHECK(hipEventDestroy(stop));
    HIP_CHECK(hipHostFree(queries)); HIP_CHECK(hipHostFree(preds));
    HIP_CHECK(hipFree(dTrain)); HIP_CHECK(hipFree(dLabels)); HIP_CHECK(hipFree(dQueries)); HIP_CHECK(hipFree(dPreds));
    return mismatches == 0 ? 0 : 1;
}
