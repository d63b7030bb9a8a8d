// Genetic algorithm with population size 512 for a 64-item 0/1 knapsack
// problem, optimized for warp-level programming: a genome is one 64-bit word
// (__popcll-friendly), each thread breeds one child per generation
// (tournament selection, uniform crossover, bit-flip mutation) from a
// counter-based hash RNG, and the generation's best individual is found with
// a __shfl_down_sync max-reduction per warp followed by one 64-bit atomicMax
// per warp. Elitism keeps the best genome. Everything is integer arithmetic.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                          \
    do {                                                                          \
        cudaError_t err = (call);                                                 \
        if (err != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error: %s (line %d)\n", cudaGetErrorString(err), __LINE__); \
            exit(EXIT_FAILURE);                                                   \
        }                                                                         \
    } while (0)

#define POP 512
#define ITEMS 64
#define GENERATIONS 200
#define CAPACITY 1000

__constant__ int cWeight[ITEMS];
__constant__ int cValue[ITEMS];

__device__ __forceinline__ unsigned int hash3(unsigned int a, unsigned int b, unsigned int c) {
    unsigned int h = a * 0x9E3779B1u ^ b * 0x85EBCA77u ^ c * 0xC2B2AE3Du;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    return h;
}

__device__ int fitness(unsigned long long g) {
    int w = 0, v = 0;
    for (int i = 0; i < ITEMS; ++i)
        if (g >> i & 1ULL) {
            w += cWeight[i];
            v += cValue[i];
        }
    return w <= CAPACITY ? v : CAPACITY - w;  // infeasible: negative, proportional to the excess
}

__global__ void evaluate(const unsigned long long* pop, int* fit, unsigned long long* best) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int f = fitness(pop[i]);
    fit[i] = f;
    // key: fitness (offset to be non-negative) high, inverted index low -> ties go to the lowest index
    unsigned long long key = ((unsigned long long)(f + (1 << 20)) << 32) | (0xffffffffu - (unsigned int)i);
    for (int offset = 16; offset > 0; offset >>= 1) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, key, offset);
        key = other > key ? other : key;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(best, key);
}

__global__ void breed(const unsigned long long* pop, const int* fit, unsigned long long* next,
                      const unsigned long long* best, int gen) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int eliteIdx = (int)(0xffffffffu - (unsigned int)(*best & 0xffffffffu));
    if (i == 0) {
        next[0] = pop[eliteIdx];
        return;
    }
    auto tournament = [&](unsigned int salt) {
        const int a = hash3(gen, i, salt) % POP, b = hash3(gen, i, salt + 1) % POP;
        return fit[a] > fit[b] || (fit[a] == fit[b] && a < b) ? a : b;
    };
    const unsigned long long p1 = pop[tournament(1)], p2 = pop[tournament(3)];
    const unsigned long long mask = ((unsigned long long)hash3(gen, i, 5) << 32) | hash3(gen, i, 6);
    unsigned long long child = (p1 & mask) | (p2 & ~mask);
    for (int k = 0; k < 2; ++k) {  // about 2/64 mutation rate: flip a random bit with probability 1/2 each
        const unsigned int r = hash3(gen, i, 7 + k);
        if (r & 1u) child ^= 1ULL << ((r >> 1) % ITEMS);
    }
    next[i] = child;
}

int main() {
    int weight[ITEMS], value[ITEMS];
    for (int i = 0; i < ITEMS; ++i) {
        weight[i] = 10 + (i * 37) % 41;
        value[i] = 5 + (i * 53 + weight[i] * 3) % 47;
    }
    CUDA_CHECK(cudaMemcpyToSymbol(cWeight, weight, sizeof(weight)));
    CUDA_CHECK(cudaMemcpyToSymbol(cValue, value, sizeof(value)));

    // Initial population: sparse random genomes (about 1/4 of the items).
    std::vector<unsigned long long> pop(POP);
    unsigned long long s = 0x123456789ULL;
    for (int i = 0; i < POP; ++i) {
        unsigned long long a = 0, b = 0;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        a = s;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        b = s;
        pop[i] = a & b;
    }

    unsigned long long *dPop, *dNext, *dBest;
    int* dFit;
    CUDA_CHECK(cudaMalloc(&dPop, POP * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&dNext, POP * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&dBest, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&dFit, POP * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dPop, pop.data(), POP * sizeof(unsigned long long), cudaMemcpyHostToDevice));

    unsigned long long bestKey = 0;
    for (int gen = 0; gen <= GENERATIONS; ++gen) {
        CUDA_CHECK(cudaMemset(dBest, 0, sizeof(unsigned long long)));
        evaluate<<<POP / 128, 128>>>(dPop, dFit, dBest);
        CUDA_CHECK(cudaGetLastError());
        if (gen % 40 == 0) {
            CUDA_CHECK(cudaMemcpy(&bestKey, dBest, sizeof(bestKey), cudaMemcpyDeviceToHost));
            printf("generation %3d: best fitness %d\n", gen, (int)(bestKey >> 32) - (1 << 20));
        }
        if (gen == GENERATIONS) break;
        breed<<<POP / 128, 128>>>(dPop, dFit, dNext, dBest, gen);
        CUDA_CHECK(cudaGetLastError());
        std::swap(dPop, dNext);
    }
    CUDA_CHECK(cudaMemcpy(pop.data(), dPop, POP * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    const int bestIdx = (int)(0xffffffffu - (unsigned int)(bestKey & 0xffffffffu));
    const unsigned long long g = pop[bestIdx];
    int w = 0, v = 0;
    for (int i = 0; i < ITEMS; ++i)
        if (g >> i & 1ULL) {
            w += weight[i];
            v += value[i];
        }

    // Exact optimum by dynamic programming.
    std::vector<int> dp(CAPACITY + 1, 0);
    for (int i = 0; i < ITEMS; ++i)
        for (int c = CAPACITY; c >= weight[i]; --c) dp[c] = std::max(dp[c], dp[c - weight[i]] + value[i]);

    printf("best genome=%016llx items=%d weight=%d value=%d\n", g, __builtin_popcountll(g), w, v);
    printf("dynamic programming optimum=%d, GA reaches %.1f%% of it\n", dp[CAPACITY], 100.0 * v / dp[CAPACITY]);
    printf("feasible: %s\n", w <= CAPACITY ? "yes" : "no");

    cudaFree(dPop); cudaFree(dNext); cudaFree(dBest); cudaFree(dFit);
    return w <= CAPACITY ? 0 : 1;
}
