// Monte Carlo estimate of pi with the cuRAND device API.
#include <cstdio>
#include <hip/hip_runtime.h>
#include <hiprand/hiprand_kernel.h>

__global__ void setup(hiprandState* states, unsigned long long seed) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    hiprand_init(seed, id, 0, &states[id]);
}

__global__ void sample(hiprandState* states, int perThread, unsigned long long* hits) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    hiprandState local = states[id];
    unsigned long long h = 0;
    for (int i = 0; i < perThread; ++i) {
        float x = hiprand_uniform(&local);
        float y = hiprand_uniform(&local);
        if (x * x + y * y <= 1.0f) ++h;
    }
    float g = hiprand_normal(&local);
    (void)g;
    states[id] = local;
    atomicAdd(hits, h);
}

int main() {
    const int blocks = 32, threads = 128, perThread = 256;
    hiprandState* states;
    unsigned long long* hits;
    hipMalloc(&states, blocks * threads * sizeof(hiprandState));
    hipMalloc(&hits, sizeof(unsigned long long));
    hipMemset(hits, 0, sizeof(unsigned long long));
    setup<<<blocks, threads>>>(states, 1234ULL);
    sample<<<blocks, threads>>>(states, perThread, hits);
    unsigned long long h = 0;
    hipMemcpy(&h, hits, sizeof(h), hipMemcpyDeviceToHost);
    double pi = 4.0 * (double)h / ((double)blocks * threads * perThread);
    printf("pi~%.1f\n", pi);
    hipFree(states);
    hipFree(hits);
    return 0;
}
