// Driver API basics: device, context, memory and copies.
// hipify-test: amd-only: HIP 5.2 maps cuMemAlloc/cuMemFree to hipMalloc/hipFree, whose NVIDIA
// versions take void* while hipDeviceptr_t is CUdeviceptr (an integer) there.
#include <cstdio>
#include <hip/hip_runtime.h>

int main() {
    hipError_t r = hipInit(0);
    if (r != hipSuccess) { printf("init failed\n"); return 0; }
    int count = 0;
    hipGetDeviceCount(&count);
    hipDevice_t dev;
    hipDeviceGet(&dev, 0);
    char name[128];
    hipDeviceGetName(name, sizeof(name), dev);
    size_t mem = 0;
    hipDeviceTotalMem(&mem, dev);
    hipCtx_t ctx;
    hipCtxCreate(&ctx, 0, dev);
    const int n = 64;
    int h[n];
    for (int i = 0; i < n; ++i) h[i] = i * 3;
    hipDeviceptr_t d;
    hipMalloc(&d, sizeof(h));
    hipMemcpyHtoD(d, h, sizeof(h));
    hipMemsetD32(d, 7, n / 2);
    hipMemcpyDtoH(h, d, sizeof(h));
    hipCtxSynchronize();
    long sum = 0;
    for (int i = 0; i < n; ++i) sum += h[i];
    printf("devices=%d mem=%s sum=%ld\n", count, mem > 0 ? "yes" : "no", sum);
    hipFree(d);
    hipCtxDestroy(ctx);
    return 0;
}
