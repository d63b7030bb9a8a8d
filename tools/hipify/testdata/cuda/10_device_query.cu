// Device properties, attributes and memory information.
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        printf("no device: %s (%s)\n", cudaGetErrorString(err), cudaGetErrorName(err));
        return 0;
    }
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    for (int dev = 0; dev < count; ++dev) {
        cudaSetDevice(dev);
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, dev);
        int smCount = 0, warp = 0;
        cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, dev);
        cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, dev);
        size_t freeB = 0, totalB = 0;
        cudaMemGetInfo(&freeB, &totalB);
        printf("device %d: %s cc=%d.%d sms=%d/%d warp=%d smem/block=%zu smem/sm=%zu maxThreads=%d\n",
               dev, prop.name, prop.major, prop.minor, prop.multiProcessorCount, smCount, warp,
               prop.sharedMemPerBlock, prop.sharedMemPerMultiprocessor, prop.maxThreadsPerBlock);
        printf("grid=%dx%dx%d mem=%s managed=%d\n", prop.maxGridSize[0], prop.maxGridSize[1],
               prop.maxGridSize[2], totalB > 0 ? "yes" : "no", prop.managedMemory);
    }
    cudaDeviceReset();
    return runtime > 0 && driver > 0 ? 0 : 1;
}
