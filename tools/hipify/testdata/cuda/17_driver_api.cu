// Driver API basics: device, context, memory and copies.
// hipify-test: amd-only: HIP 5.2 maps cuMemAlloc/cuMemFree to hipMalloc/hipFree, whose NVIDIA
// versions take void* while hipDeviceptr_t is CUdeviceptr (an integer) there.
#include <cstdio>
#include <cuda.h>

int main() {
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS) { printf("init failed\n"); return 0; }
    int count = 0;
    cuDeviceGetCount(&count);
    CUdevice dev;
    cuDeviceGet(&dev, 0);
    char name[128];
    cuDeviceGetName(name, sizeof(name), dev);
    size_t mem = 0;
    cuDeviceTotalMem(&mem, dev);
    CUcontext ctx;
    cuCtxCreate(&ctx, 0, dev);
    const int n = 64;
    int h[n];
    for (int i = 0; i < n; ++i) h[i] = i * 3;
    CUdeviceptr d;
    cuMemAlloc(&d, sizeof(h));
    cuMemcpyHtoD(d, h, sizeof(h));
    cuMemsetD32(d, 7, n / 2);
    cuMemcpyDtoH(h, d, sizeof(h));
    cuCtxSynchronize();
    long sum = 0;
    for (int i = 0; i < n; ++i) sum += h[i];
    printf("devices=%d mem=%s sum=%ld\n", count, mem > 0 ? "yes" : "no", sum);
    cuMemFree(d);
    cuCtxDestroy(ctx);
    return 0;
}
