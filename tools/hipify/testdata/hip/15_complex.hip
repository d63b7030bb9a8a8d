#include <hip/hip_runtime.h>
// Complex arithmetic with cuComplex.h: a small DFT.
#include <cstdio>
#include <hip/hip_complex.h>
#include <hip/hip_runtime.h>

__global__ void dft(const hipFloatComplex* in, hipFloatComplex* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    hipFloatComplex acc = make_hipFloatComplex(0.0f, 0.0f);
    for (int t = 0; t < n; ++t) {
        float ang = -2.0f * 3.14159265f * k * t / n;
        hipFloatComplex w = make_hipFloatComplex(cosf(ang), sinf(ang));
        acc = hipCaddf(acc, hipCmulf(in[t], w));
    }
    out[k] = acc;
}

int main() {
    const int n = 64;
    hipFloatComplex h[n];
    for (int i = 0; i < n; ++i) h[i] = make_hipFloatComplex((float)(i % 4), 0.0f);
    hipFloatComplex *din, *dout;
    hipMalloc(&din, sizeof(h));
    hipMalloc(&dout, sizeof(h));
    hipMemcpy(din, h, sizeof(h), hipMemcpyHostToDevice);
    dft<<<1, n>>>(din, dout, n);
    hipMemcpy(h, dout, sizeof(h), hipMemcpyDeviceToHost);
    printf("X0=%.1f |X16|=%.1f re=%.1f im=%.1f\n", hipCrealf(h[0]), hipCabsf(h[16]),
           hipCrealf(hipConjf(h[16])), hipCimagf(h[16]));
    hipFree(din);
    hipFree(dout);
    return 0;
}
