// Histogram with shared and global atomics, plus a CAS-based max on floats.
#include <cstdio>
#include <hip/hip_runtime.h>

#define BINS 64

__device__ float atomicMaxFloat(float* addr, float value) {
    int* iaddr = (int*)addr;
    int old = *iaddr, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(iaddr, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void histogram(const unsigned char* data, int n, unsigned int* bins,
                          float* maxv, unsigned long long* count) {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i] % BINS], 1u);
        atomicMaxFloat(maxv, (float)data[i] * 0.5f);
        atomicAdd(count, 1ull);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
    if (threadIdx.x == 0) {
        atomicMax((int*)&bins[BINS], (int)blockIdx.x);
        atomicInc(&bins[BINS + 1], 1000000u);
        atomicExch(&bins[BINS + 2], 7u);
    }
}

int main() {
    const int n = 1 << 20;
    unsigned char* h = new unsigned char[n];
    for (int i = 0; i < n; ++i) h[i] = (unsigned char)((i * 2654435761u) >> 24);
    unsigned char* d;
    unsigned int* bins;
    float* maxv;
    unsigned long long* count;
    hipMalloc(&d, n);
    hipMalloc(&bins, (BINS + 3) * sizeof(unsigned int));
    hipMalloc(&maxv, sizeof(float));
    hipMalloc(&count, sizeof(unsigned long long));
    hipMemset(bins, 0, (BINS + 3) * sizeof(unsigned int));
    hipMemset(maxv, 0, sizeof(float));
    hipMemset(count, 0, sizeof(unsigned long long));
    hipMemcpy(d, h, n, hipMemcpyHostToDevice);
    histogram<<<64, 256>>>(d, n, bins, maxv, count);
    unsigned int hb[BINS + 3];
    float hm;
    unsigned long long hc;
    hipMemcpy(hb, bins, sizeof(hb), hipMemcpyDeviceToHost);
    hipMemcpy(&hm, maxv, sizeof(float), hipMemcpyDeviceToHost);
    hipMemcpy(&hc, count, sizeof(hc), hipMemcpyDeviceToHost);
    unsigned long total = 0;
    for (int b = 0; b < BINS; ++b) total += hb[b];
    printf("total=%lu bin0=%u max=%.1f count=%llu lastblock=%u inc=%u exch=%u\n",
           total, hb[0], hm, hc, hb[BINS], hb[BINS + 1], hb[BINS + 2]);
    hipFree(d); hipFree(bins); hipFree(maxv); hipFree(count);
    delete[] h;
    return 0;
}
