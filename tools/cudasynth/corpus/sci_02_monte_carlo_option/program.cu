// Monte Carlo pricing of a European call option with 262144 simulated
// paths, focused on register-resident random number generation: each
// thread runs a counter-based hash generator (no global RNG state), turns
// pairs of uniforms into normals with Box-Muller, and accumulates payoffs in
// registers. A shared-memory tree reduction with __syncthreads() produces
// one partial sum per block; the host adds the partials in a fixed order.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err = (call);                                               \
        if (err != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %d: %s (line %d)\n", (int)err,          \
                    cudaGetErrorString(err), __LINE__);                         \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define THREADS 256
#define BLOCKS 128
#define PATHS_PER_THREAD 8
#define NUM_PATHS (THREADS * BLOCKS * PATHS_PER_THREAD)

struct OptionParams {
    float S0, K, r, sigma, T;
};

__device__ __forceinline__ unsigned int hash32(unsigned int x) {
    x ^= x >> 16;
    x *= 0x21f0aaadU;
    x ^= x >> 15;
    x *= 0x735a2d97U;
    x ^= x >> 15;
    return x;
}

// Uniform in (0, 1]: 24 random bits, never zero (safe for logf).
__device__ __forceinline__ float uniform01(unsigned int counter, unsigned int stream) {
    const unsigned int bits = hash32(counter * 0x9E3779B9U ^ hash32(stream)) >> 8;
    return (float)(bits + 1) * (1.0f / 16777216.0f);
}

__global__ void monteCarloCall(OptionParams p, double* blockSums, double* blockSqSums) {
    __shared__ double sSum[THREADS];
    __shared__ double sSq[THREADS];

    const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const float drift = (p.r - 0.5f * p.sigma * p.sigma) * p.T;
    const float vol = p.sigma * sqrtf(p.T);

    double sum = 0.0, sq = 0.0;
    for (int k = 0; k < PATHS_PER_THREAD; k += 2) {
        const float u1 = uniform01(2 * k, tid);
        const float u2 = uniform01(2 * k + 1, tid);
        const float radius = sqrtf(-2.0f * logf(u1));
        float s, c;
        sincospif(2.0f * u2, &s, &c);
        const float z[2] = {radius * c, radius * s};
        for (int j = 0; j < 2; ++j) {
            const float ST = p.S0 * expf(drift + vol * z[j]);
            const double payoff = fmaxf(ST - p.K, 0.0f);
            sum += payoff;
            sq += payoff * payoff;
        }
    }
    sSum[threadIdx.x] = sum;
    sSq[threadIdx.x] = sq;
    __syncthreads();

    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            sSum[threadIdx.x] += sSum[threadIdx.x + stride];
            sSq[threadIdx.x] += sSq[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        blockSums[blockIdx.x] = sSum[0];
        blockSqSums[blockIdx.x] = sSq[0];
    }
}

static double normCdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

int main() {
    const OptionParams p = {100.0f, 105.0f, 0.05f, 0.2f, 1.0f};

    double *dSums, *dSq;
    CUDA_CHECK(cudaMalloc(&dSums, BLOCKS * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dSq, BLOCKS * sizeof(double)));
    monteCarloCall<<<BLOCKS, THREADS>>>(p, dSums, dSq);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    double hSums[BLOCKS], hSq[BLOCKS];
    CUDA_CHECK(cudaMemcpy(hSums, dSums, sizeof(hSums), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hSq, dSq, sizeof(hSq), cudaMemcpyDeviceToHost));

    double total = 0.0, totalSq = 0.0;
    for (int b = 0; b < BLOCKS; ++b) {
        total += hSums[b];
        totalSq += hSq[b];
    }
    const double mean = total / NUM_PATHS;
    const double var = totalSq / NUM_PATHS - mean * mean;
    const double discount = exp(-(double)p.r * p.T);
    const double price = discount * mean;
    const double stdErr = discount * sqrt(var / NUM_PATHS);

    // Black-Scholes closed form for comparison.
    const double d1 = (log((double)p.S0 / p.K) + (p.r + 0.5 * p.sigma * p.sigma) * p.T) / (p.sigma * sqrt((double)p.T));
    const double d2 = d1 - p.sigma * sqrt((double)p.T);
    const double bs = p.S0 * normCdf(d1) - p.K * exp(-(double)p.r * p.T) * normCdf(d2);
    const bool ok = fabs(price - bs) < 4.0 * stdErr;

    printf("paths=%d S0=%.1f K=%.1f r=%.2f sigma=%.2f T=%.1f\n", NUM_PATHS, p.S0, p.K, p.r, p.sigma, p.T);
    printf("monte carlo price=%.2f\n", price);
    printf("black-scholes price=%.4f\n", bs);
    printf("within 4 standard errors: %s\n", ok ? "PASS" : "FAIL");

    CUDA_CHECK(cudaFree(dSums));
    CUDA_CHECK(cudaFree(dSq));
    return ok ? 0 : 1;
}
