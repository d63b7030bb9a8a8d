// Simulated annealing with 1024 independent states (Markov chains) for a
// 24-city travelling salesman problem, optimized for reproducibility and
// constant-memory broadcast: the integer distance matrix and a precomputed
// table of Metropolis acceptance thresholds (one row per temperature stage)
// live in __constant__ memory, each chain owns a counter-based random stream,
// and all decisions are integer comparisons. Chains run 2-opt moves; the
// best (length, chain) pair is reduced with a 64-bit atomicMin.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t e_ = (call);                                                \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), \
                    __FILE__, __LINE__);                                        \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define NUM_CITIES 24
#define NUM_CHAINS 1024
#define STAGES 16
#define MOVES_PER_STAGE 1500
#define MAX_DELTA 256

__constant__ int cDist[NUM_CITIES * NUM_CITIES];
__constant__ unsigned int cAccept[STAGES][MAX_DELTA];  // P(accept uphill by d) * 2^24

__device__ __forceinline__ unsigned int rng(unsigned int& state) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

__device__ int tourLength(const unsigned char* tour) {
    int len = 0;
    for (int i = 0; i < NUM_CITIES; ++i) len += cDist[tour[i] * NUM_CITIES + tour[(i + 1) % NUM_CITIES]];
    return len;
}

__global__ void annealKernel(unsigned char* tours, int* lengths, unsigned long long* best) {
    const int chain = blockIdx.x * blockDim.x + threadIdx.x;
    if (chain >= NUM_CHAINS) return;
    unsigned char tour[NUM_CITIES];
    for (int i = 0; i < NUM_CITIES; ++i) tour[i] = (unsigned char)((i * 7 + chain) % NUM_CITIES);  // 7 is coprime to 24
    unsigned int state = 0x9E3779B9u ^ (chain * 0x85EBCA6Bu + 1u);
    int len = tourLength(tour);

    for (int stage = 0; stage < STAGES; ++stage) {
        for (int m = 0; m < MOVES_PER_STAGE; ++m) {
            // 2-opt: reverse tour[i+1 .. j], 0 <= i < j-1 < N-1
            int i = rng(state) % NUM_CITIES, j = rng(state) % NUM_CITIES;
            if (i > j) { const int t = i; i = j; j = t; }
            if (j - i < 2 || (i == 0 && j == NUM_CITIES - 1)) continue;
            const int a = tour[i], b = tour[i + 1], c = tour[j], d = tour[(j + 1) % NUM_CITIES];
            const int delta = cDist[a * NUM_CITIES + c] + cDist[b * NUM_CITIES + d] - cDist[a * NUM_CITIES + b] -
                              cDist[c * NUM_CITIES + d];
            bool accept = delta <= 0;
            if (!accept && delta < MAX_DELTA) accept = (rng(state) >> 8) < cAccept[stage][delta];
            if (accept) {
                for (int l = i + 1, r = j; l < r; ++l, --r) {
                    const unsigned char t = tour[l];
                    tour[l] = tour[r];
                    tour[r] = t;
                }
                len += delta;
            }
        }
    }
    for (int i = 0; i < NUM_CITIES; ++i) tours[chain * NUM_CITIES + i] = tour[i];
    lengths[chain] = len;
    atomicMin(best, ((unsigned long long)len << 32) | (unsigned int)chain);
}

int main() {
    int x[NUM_CITIES], y[NUM_CITIES];
    unsigned int s = 31337u;
    for (int i = 0; i < NUM_CITIES; ++i) {
        s = s * 1664525u + 1013904223u;
        x[i] = (s >> 10) % 100;
        s = s * 1664525u + 1013904223u;
        y[i] = (s >> 10) % 100;
    }
    static int dist[NUM_CITIES * NUM_CITIES];
    for (int i = 0; i < NUM_CITIES; ++i)
        for (int j = 0; j < NUM_CITIES; ++j) {
            const double dx = x[i] - x[j], dy = y[i] - y[j];
            dist[i * NUM_CITIES + j] = (int)(sqrt(dx * dx + dy * dy) + 0.5);
        }
    // Geometric cooling from T=60 to about T=1.
    static unsigned int accept[STAGES][MAX_DELTA];
    for (int st = 0; st < STAGES; ++st) {
        const double T = 60.0 * pow(0.76, st);
        for (int d = 0; d < MAX_DELTA; ++d) accept[st][d] = (unsigned int)(exp(-d / T) * 16777216.0);
    }
    CUDA_CHECK(cudaMemcpyToSymbol(cDist, dist, sizeof(dist)));
    CUDA_CHECK(cudaMemcpyToSymbol(cAccept, accept, sizeof(accept)));

    unsigned char* dTours;
    int* dLengths;
    unsigned long long* dBest;
    const unsigned long long init = ~0ULL;
    CUDA_CHECK(cudaMalloc(&dTours, NUM_CHAINS * NUM_CITIES));
    CUDA_CHECK(cudaMalloc(&dLengths, NUM_CHAINS * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dBest, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(dBest, &init, sizeof(init), cudaMemcpyHostToDevice));

    annealKernel<<<NUM_CHAINS / 128, 128>>>(dTours, dLengths, dBest);
    CUDA_CHECK(cudaGetLastError());

    static unsigned char tours[NUM_CHAINS * NUM_CITIES];
    static int lengths[NUM_CHAINS];
    unsigned long long best;
    CUDA_CHECK(cudaMemcpy(tours, dTours, sizeof(tours), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(lengths, dLengths, sizeof(lengths), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&best, dBest, sizeof(best), cudaMemcpyDeviceToHost));
    const int bestLen = (int)(best >> 32), bestChain = (int)(best & 0xffffffffu);

    // Validate the best tour: a permutation whose recomputed length matches.
    bool seen[NUM_CITIES] = {false}, valid = true;
    int recomputed = 0;
    const unsigned char* t = &tours[bestChain * NUM_CITIES];
    for (int i = 0; i < NUM_CITIES; ++i) {
        if (seen[t[i]]) valid = false;
        seen[t[i]] = true;
        recomputed += dist[t[i] * NUM_CITIES + t[(i + 1) % NUM_CITIES]];
    }
    long long sum = 0;
    int worst = 0, hitBest = 0;
    for (int c = 0; c < NUM_CHAINS; ++c) {
        sum += lengths[c];
        if (lengths[c] > worst) worst = lengths[c];
        hitBest += lengths[c] == bestLen;
    }
    printf("cities=%d chains=%d moves/chain=%d\n", NUM_CITIES, NUM_CHAINS, STAGES * MOVES_PER_STAGE);
    printf("best length=%d (chain %d), chains reaching it=%d\n", bestLen, bestChain, hitBest);
    printf("mean final length=%.2f worst=%d\n", (double)sum / NUM_CHAINS, worst);
    printf("best tour:");
    for (int i = 0; i < NUM_CITIES; ++i) printf(" %d", t[i]);
    printf("\n");
    printf("best tour valid: %s\n", (valid && recomputed == bestLen) ? "yes" : "no");

    cudaFree(dTours);
    cudaFree(dLengths);
    cudaFree(dBest);
    return (valid && recomputed == bestLen) ? 0 : 1;
}
