#include <hip/hip_runtime.h>
// Half-precision arithmetic with cuda_fp16.h.
#include <cstdio>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

__global__ void axpyHalf(const __half* x, __half* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half ha = __float2half(a);
        y[i] = __hadd(__hmul(ha, x[i]), y[i]);
    }
}

__global__ void dotHalf2(const __half2* x, const __half2* y, float* out, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        __half2 p = __hmul2(x[i], y[i]);
        atomicAdd(out, __low2float(p) + __high2float(p));
    }
}

int main() {
    const int n = 1024;
    __half hx[n], hy[n];
    for (int i = 0; i < n; ++i) { hx[i] = __float2half((float)(i % 8)); hy[i] = __float2half(1.0f); }
    __half *dx, *dy;
    float* dot;
    hipMalloc(&dx, sizeof(hx));
    hipMalloc(&dy, sizeof(hy));
    hipMalloc(&dot, sizeof(float));
    hipMemset(dot, 0, sizeof(float));
    hipMemcpy(dx, hx, sizeof(hx), hipMemcpyHostToDevice);
    hipMemcpy(dy, hy, sizeof(hy), hipMemcpyHostToDevice);
    axpyHalf<<<n / 256, 256>>>(dx, dy, 2.0f, n);
    dotHalf2<<<n / 2 / 256, 256>>>((const __half2*)dx, (const __half2*)dy, dot, n / 2);
    float hdot = 0;
    hipMemcpy(&hdot, dot, sizeof(float), hipMemcpyDeviceToHost);
    hipMemcpy(hy, dy, sizeof(hy), hipMemcpyDeviceToHost);
    printf("y[5]=%.1f dot=%.1f\n", __half2float(hy[5]), hdot);
    hipFree(dx); hipFree(dy); hipFree(dot);
    return 0;
}
