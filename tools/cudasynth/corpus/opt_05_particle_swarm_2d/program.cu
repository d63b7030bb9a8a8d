// Particle swarm optimization with 256 particles in 2D space, minimizing
// Himmelblau's function on the box [0, 5] x [0, 5] (its only minimum there
// is (3, 2)), focused on lock-free global-best updates: each particle packs
// (fitness bits, particle index) into one 64-bit word and publishes it with
// an atomicCAS loop; for non-negative floats the IEEE bit pattern orders
// like the value, so the smallest word is the best particle. Random numbers
// come from a stateless hash of (iteration, particle, dimension).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e = (call);                                               \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), \
                    __FILE__, __LINE__);                                      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define NUM_PARTICLES 256
#define DIM 2
#define ITERATIONS 150
#define LOWER 0.0f
#define UPPER 5.0f

struct Swarm {
    float pos[NUM_PARTICLES][DIM];
    float vel[NUM_PARTICLES][DIM];
    float bestPos[NUM_PARTICLES][DIM];
    float bestFit[NUM_PARTICLES];
};

__host__ __device__ inline float himmelblau(float x, float y) {
    const float a = x * x + y - 11.0f, b = x + y * y - 7.0f;
    return a * a + b * b;
}

__device__ inline float rand01(unsigned int it, unsigned int p, unsigned int d) {
    unsigned int h = it * 0x27d4eb2du ^ p * 0x165667b1u ^ d * 0x9e3779b9u;
    h ^= h >> 15;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return (h >> 8) * (1.0f / 16777216.0f);
}

__device__ void publishBest(unsigned long long* globalBest, float fit, int idx) {
    const unsigned long long mine = ((unsigned long long)__float_as_uint(fit) << 32) | (unsigned int)idx;
    unsigned long long old = *globalBest;
    while (mine < old) {
        const unsigned long long seen = atomicCAS(globalBest, old, mine);
        if (seen == old) break;  // swapped in
        old = seen;              // somebody else won; retry only if we are still better
    }
}

__global__ void initSwarm(Swarm* s, unsigned long long* globalBest) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= NUM_PARTICLES) return;
    for (int d = 0; d < DIM; ++d) {
        s->pos[p][d] = LOWER + (UPPER - LOWER) * rand01(0, p, d);
        s->vel[p][d] = 0.5f * (rand01(0, p, d + 7) - 0.5f);
        s->bestPos[p][d] = s->pos[p][d];
    }
    s->bestFit[p] = himmelblau(s->pos[p][0], s->pos[p][1]);
    publishBest(globalBest, s->bestFit[p], p);
}

// One PSO iteration; the global best is read from the previous iteration's snapshot.
__global__ void psoStep(Swarm* s, const float* gBestPos, unsigned long long* globalBest, int it) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= NUM_PARTICLES) return;
    const float w = 0.72f, c1 = 1.49f, c2 = 1.49f;
    for (int d = 0; d < DIM; ++d) {
        const float r1 = rand01(it, p, 2 * d + 1), r2 = rand01(it, p, 2 * d + 2);
        float v = w * s->vel[p][d] + c1 * r1 * (s->bestPos[p][d] - s->pos[p][d]) + c2 * r2 * (gBestPos[d] - s->pos[p][d]);
        v = fminf(fmaxf(v, -1.0f), 1.0f);
        s->vel[p][d] = v;
        s->pos[p][d] = fminf(fmaxf(s->pos[p][d] + v, LOWER), UPPER);
    }
    const float fit = himmelblau(s->pos[p][0], s->pos[p][1]);
    if (fit < s->bestFit[p]) {
        s->bestFit[p] = fit;
        s->bestPos[p][0] = s->pos[p][0];
        s->bestPos[p][1] = s->pos[p][1];
        publishBest(globalBest, fit, p);
    }
}

__global__ void snapshotBest(const Swarm* s, const unsigned long long* globalBest, float* gBestPos) {
    const int idx = (int)(*globalBest & 0xffffffffu);
    if (threadIdx.x < DIM) gBestPos[threadIdx.x] = s->bestPos[idx][threadIdx.x];
}

int main() {
    Swarm* dSwarm;
    unsigned long long* dGlobalBest;
    float* dGBestPos;
    const unsigned long long init = ~0ULL;
    CUDA_CHECK(cudaMalloc(&dSwarm, sizeof(Swarm)));
    CUDA_CHECK(cudaMalloc(&dGlobalBest, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&dGBestPos, DIM * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dGlobalBest, &init, sizeof(init), cudaMemcpyHostToDevice));

    const int threads = 128, blocks = (NUM_PARTICLES + threads - 1) / threads;
    initSwarm<<<blocks, threads>>>(dSwarm, dGlobalBest);
    snapshotBest<<<1, 32>>>(dSwarm, dGlobalBest, dGBestPos);
    CUDA_CHECK(cudaGetLastError());
    for (int it = 1; it <= ITERATIONS; ++it) {
        psoStep<<<blocks, threads>>>(dSwarm, dGBestPos, dGlobalBest, it);
        snapshotBest<<<1, 32>>>(dSwarm, dGlobalBest, dGBestPos);
        if (it % 50 == 0) {
            unsigned long long key;
            CUDA_CHECK(cudaMemcpy(&key, dGlobalBest, sizeof(key), cudaMemcpyDeviceToHost));
            const unsigned int bits = (unsigned int)(key >> 32);
            float fit;
            memcpy(&fit, &bits, sizeof(fit));
            printf("iteration %3d: best f < 1e-4: %s\n", it, fit < 1e-4f ? "yes" : "no");
        }
    }
    CUDA_CHECK(cudaGetLastError());

    float best[DIM];
    CUDA_CHECK(cudaMemcpy(best, dGBestPos, sizeof(best), cudaMemcpyDeviceToHost));
    const float f = himmelblau(best[0], best[1]);
    printf("particles=%d dimensions=%d iterations=%d\n", NUM_PARTICLES, DIM, ITERATIONS);
    printf("best position=(%.4f, %.4f)\n", best[0], best[1]);
    printf("best value < 1e-6: %s\n", f < 1e-6f ? "yes" : "no");

    cudaFree(dSwarm);
    cudaFree(dGlobalBest);
    cudaFree(dGBestPos);
    return f < 1e-6f ? 0 : 1;
}
