// Complex arithmetic with cuComplex.h: a small DFT.
#include <cstdio>
#include <cuComplex.h>
#include <cuda_runtime.h>

__global__ void dft(const cuFloatComplex* in, cuFloatComplex* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    cuFloatComplex acc = make_cuFloatComplex(0.0f, 0.0f);
    for (int t = 0; t < n; ++t) {
        float ang = -2.0f * 3.14159265f * k * t / n;
        cuFloatComplex w = make_cuFloatComplex(cosf(ang), sinf(ang));
        acc = cuCaddf(acc, cuCmulf(in[t], w));
    }
    out[k] = acc;
}

int main() {
    const int n = 64;
    cuFloatComplex h[n];
    for (int i = 0; i < n; ++i) h[i] = make_cuFloatComplex((float)(i % 4), 0.0f);
    cuFloatComplex *din, *dout;
    cudaMalloc(&din, sizeof(h));
    cudaMalloc(&dout, sizeof(h));
    cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice);
    dft<<<1, n>>>(din, dout, n);
    cudaMemcpy(h, dout, sizeof(h), cudaMemcpyDeviceToHost);
    printf("X0=%.1f |X16|=%.1f re=%.1f im=%.1f\n", cuCrealf(h[0]), cuCabsf(h[16]),
           cuCrealf(cuConjf(h[16])), cuCimagf(h[16]));
    cudaFree(din);
    cudaFree(dout);
    return 0;
}
