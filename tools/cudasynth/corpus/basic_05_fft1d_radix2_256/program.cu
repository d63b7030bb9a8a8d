// Batched 1D FFT (radix-2, decimation in time) of 256-point complex signals,
// optimized for shared memory: one block transforms one signal entirely in
// shared memory. Input is loaded in bit-reversed order (__brev), then log2(N)
// butterfly stages run with a __syncthreads() between stages.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at line %d\n",                     \
                    cudaGetErrorString(e_), __LINE__);                        \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

constexpr int FFT_N = 256;
constexpr int LOG2_N = 8;
constexpr int BATCH = 64;

struct Complex {
    float re, im;
};

__device__ __forceinline__ Complex cmul(Complex a, Complex b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
__device__ __forceinline__ Complex cadd(Complex a, Complex b) { return {a.re + b.re, a.im + b.im}; }
__device__ __forceinline__ Complex csub(Complex a, Complex b) { return {a.re - b.re, a.im - b.im}; }

__global__ void fft256(const Complex* __restrict__ in, Complex* __restrict__ out) {
    __shared__ Complex buf[FFT_N];
    const Complex* src = in + blockIdx.x * FFT_N;

    // Each of the FFT_N/2 threads loads two elements into bit-reversed slots.
    for (int i = threadIdx.x; i < FFT_N; i += blockDim.x) {
        const int rev = __brev((unsigned)i) >> (32 - LOG2_N);
        buf[rev] = src[i];
    }
    __syncthreads();

    for (int s = 1; s <= LOG2_N; ++s) {
        const int half = 1 << (s - 1);
        const int t = threadIdx.x;                // butterfly index, FFT_N/2 of them
        const int group = t / half, pos = t % half;
        const int i0 = group * 2 * half + pos;
        const int i1 = i0 + half;
        float sn, cs;
        sincospif(-(float)pos / (float)half, &sn, &cs);  // exp(-2*pi*i*pos/(2*half))
        const Complex w = {cs, sn};
        const Complex a = buf[i0];
        const Complex b = cmul(w, buf[i1]);
        __syncthreads();
        buf[i0] = cadd(a, b);
        buf[i1] = csub(a, b);
        __syncthreads();
    }

    for (int i = threadIdx.x; i < FFT_N; i += blockDim.x) out[blockIdx.x * FFT_N + i] = buf[i];
}

int main() {
    const size_t count = (size_t)FFT_N * BATCH;
    Complex* h_in = (Complex*)malloc(count * sizeof(Complex));
    Complex* h_out = (Complex*)malloc(count * sizeof(Complex));

    // Signal b is a sum of two cosines at bins (b % 7 + 1) and (b % 13 + 20).
    const double PI = 3.14159265358979323846;
    for (int b = 0; b < BATCH; ++b) {
        const int k1 = b % 7 + 1, k2 = b % 13 + 20;
        for (int n = 0; n < FFT_N; ++n) {
            const double v = cos(2 * PI * k1 * n / FFT_N) + 0.5 * cos(2 * PI * k2 * n / FFT_N);
            h_in[b * FFT_N + n] = {(float)v, 0.0f};
        }
    }

    Complex *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(Complex)));
    CUDA_CHECK(cudaMalloc(&d_out, count * sizeof(Complex)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, count * sizeof(Complex), cudaMemcpyHostToDevice));

    fft256<<<BATCH, FFT_N / 2>>>(d_in, d_out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_out, d_out, count * sizeof(Complex), cudaMemcpyDeviceToHost));

    // Reference: direct DFT in double precision for a few signals.
    double maxErr = 0.0;
    for (int b = 0; b < BATCH; b += 9) {
        for (int k = 0; k < FFT_N; ++k) {
            double re = 0, im = 0;
            for (int n = 0; n < FFT_N; ++n) {
                const double ang = -2 * PI * (double)k * n / FFT_N;
                re += h_in[b * FFT_N + n].re * cos(ang);
                im += h_in[b * FFT_N + n].re * sin(ang);
            }
            const double dr = re - h_out[b * FFT_N + k].re, di = im - h_out[b * FFT_N + k].im;
            const double err = sqrt(dr * dr + di * di);
            if (err > maxErr) maxErr = err;
        }
    }

    for (int b = 0; b < 3; ++b) {
        printf("signal %d peaks:", b);
        for (int k = 0; k < FFT_N / 2; ++k) {
            const Complex c = h_out[b * FFT_N + k];
            const float mag = sqrtf(c.re * c.re + c.im * c.im);
            if (mag > 1.0f) printf(" bin %d |X|=%.2f", k, mag);
        }
        printf("\n");
    }
    printf("accuracy vs direct DFT: %s\n", maxErr < 1e-2 ? "PASS" : "FAIL");

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return maxErr < 1e-2 ? 0 : 1;
}
