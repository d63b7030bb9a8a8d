// Sparse FFT computation: recover the few dominant frequencies (the sparse
// spectrum) of a noisy 1024-point signal, optimized for on-chip work. One
// block computes the full radix-2 FFT in shared memory, calling libdevice
// intrinsics directly (__nv_brev for the bit-reversed load, __nv_sincospif
// for twiddles), then every warp votes on which of its bins exceed the
// threshold with __ballot_sync and stores the 32-bit mask; the host decodes
// the masks into the list of significant bins.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

// libdevice functions (NVVM links libdevice into every device compilation).
extern "C" __device__ unsigned int __nv_brev(unsigned int x);
extern "C" __device__ void __nv_sincospif(float x, float* s, float* c);

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                       \
                    cudaGetErrorString(e_), __FILE__, __LINE__);              \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define N 1024
#define LOG2N 10
#define THREADS (N / 2)
#define NUM_TONES 6

__global__ void fftAndDetect(const float* __restrict__ signal, float2* __restrict__ spectrum,
                             unsigned int* __restrict__ warpMasks, int* peakCount, float threshold) {
    __shared__ float2 buf[N];
    const int t = threadIdx.x;

    for (int i = t; i < N; i += blockDim.x) {
        const unsigned int rev = __nv_brev((unsigned int)i) >> (32 - LOG2N);
        buf[rev] = make_float2(signal[i], 0.0f);
    }
    __syncthreads();

    for (int half = 1; half < N; half <<= 1) {
        const int pos = t & (half - 1);
        const int i0 = ((t - pos) << 1) + pos;
        const int i1 = i0 + half;
        float s, c;
        __nv_sincospif(-(float)pos / (float)half, &s, &c);
        const float2 a = buf[i0], b = buf[i1];
        const float2 wb = make_float2(c * b.x - s * b.y, c * b.y + s * b.x);
        __syncthreads();
        buf[i0] = make_float2(a.x + wb.x, a.y + wb.y);
        buf[i1] = make_float2(a.x - wb.x, a.y - wb.y);
        __syncthreads();
    }

    // Bins 0..N/2-1 (the signal is real, the upper half mirrors them).
    const float2 X = buf[t];
    spectrum[t] = X;
    const bool significant = (X.x * X.x + X.y * X.y) > threshold * threshold;
    const unsigned int mask = __ballot_sync(0xffffffffu, significant);
    if ((t & 31) == 0) {
        warpMasks[t / 32] = mask;
        if (mask) atomicAdd(peakCount, __popc(mask));
    }
}

int main() {
    const int tones[NUM_TONES] = {17, 64, 101, 230, 311, 480};
    const float amps[NUM_TONES] = {1.0f, 0.8f, 0.6f, 0.5f, 0.9f, 0.7f};
    const double PI = 3.14159265358979323846;
    float* h = (float*)malloc(N * sizeof(float));
    unsigned int seed = 99u;
    for (int n = 0; n < N; ++n) {
        double v = 0.0;
        for (int k = 0; k < NUM_TONES; ++k) v += amps[k] * cos(2.0 * PI * tones[k] * n / N);
        seed = seed * 1103515245u + 12345u;
        v += 0.05 * ((double)((seed >> 16) & 0x7fff) / 32767.0 - 0.5);  // small uniform noise
        h[n] = (float)v;
    }

    float* dSignal;
    float2* dSpectrum;
    unsigned int* dMasks;
    int* dCount;
    CUDA_CHECK(cudaMalloc(&dSignal, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dSpectrum, (N / 2) * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&dMasks, (THREADS / 32) * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc(&dCount, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dSignal, h, N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dCount, 0, sizeof(int)));

    const float threshold = 0.25f * N / 2;  // a tone of amplitude A gives |X| = A*N/2
    fftAndDetect<<<1, THREADS>>>(dSignal, dSpectrum, dMasks, dCount, threshold);
    CUDA_CHECK(cudaGetLastError());

    unsigned int masks[THREADS / 32];
    float2 spectrum[N / 2];
    int count = 0;
    CUDA_CHECK(cudaMemcpy(masks, dMasks, sizeof(masks), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(spectrum, dSpectrum, sizeof(spectrum), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&count, dCount, sizeof(int), cudaMemcpyDeviceToHost));

    printf("signal length %d, %d tones, threshold |X| > %.1f\n", N, NUM_TONES, threshold);
    printf("significant bins (%d):", count);
    int found = 0, correct = 0;
    for (int w = 0; w < THREADS / 32; ++w)
        for (int b = 0; b < 32; ++b)
            if (masks[w] & (1u << b)) {
                const int bin = w * 32 + b;
                const float2 X = spectrum[bin];
                printf(" %d(A=%.2f)", bin, 2.0f * sqrtf(X.x * X.x + X.y * X.y) / N);
                ++found;
                for (int k = 0; k < NUM_TONES; ++k) correct += (bin == tones[k]);
            }
    printf("\n");
    const bool ok = found == NUM_TONES && correct == NUM_TONES && count == NUM_TONES;
    printf("recovered all tones exactly: %s\n", ok ? "yes" : "no");

    cudaFree(dSignal); cudaFree(dSpectrum); cudaFree(dMasks); cudaFree(dCount);
    free(h);
    return ok ? 0 : 1;
}
