// Monte Carlo estimate of pi with the cuRAND device API.
#include <cstdio>
#include <cuda_runtime.h>
#include <curand_kernel.h>

__global__ void setup(curandState* states, unsigned long long seed) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(seed, id, 0, &states[id]);
}

__global__ void sample(curandState* states, int perThread, unsigned long long* hits) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState local = states[id];
    unsigned long long h = 0;
    for (int i = 0; i < perThread; ++i) {
        float x = curand_uniform(&local);
        float y = curand_uniform(&local);
        if (x * x + y * y <= 1.0f) ++h;
    }
    float g = curand_normal(&local);
    (void)g;
    states[id] = local;
    atomicAdd(hits, h);
}

int main() {
    const int blocks = 32, threads = 128, perThread = 256;
    curandState* states;
    unsigned long long* hits;
    cudaMalloc(&states, blocks * threads * sizeof(curandState));
    cudaMalloc(&hits, sizeof(unsigned long long));
    cudaMemset(hits, 0, sizeof(unsigned long long));
    setup<<<blocks, threads>>>(states, 1234ULL);
    sample<<<blocks, threads>>>(states, perThread, hits);
    unsigned long long h = 0;
    cudaMemcpy(&h, hits, sizeof(h), cudaMemcpyDeviceToHost);
    double pi = 4.0 * (double)h / ((double)blocks * threads * perThread);
    printf("pi~%.1f\n", pi);
    cudaFree(states);
    cudaFree(hits);
    return 0;
}
