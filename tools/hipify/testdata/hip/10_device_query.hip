// Device properties, attributes and memory information.
#include <cstdio>
#include <hip/hip_runtime.h>

int main() {
    int count = 0;
    hipError_t err = hipGetDeviceCount(&count);
    if (err != hipSuccess) {
        printf("no device: %s (%s)\n", hipGetErrorString(err), hipGetErrorName(err));
        return 0;
    }
    int runtime = 0, driver = 0;
    hipRuntimeGetVersion(&runtime);
    hipDriverGetVersion(&driver);
    for (int dev = 0; dev < count; ++dev) {
        hipSetDevice(dev);
        hipDeviceProp_t prop;
        hipGetDeviceProperties(&prop, dev);
        int smCount = 0, warp = 0;
        hipDeviceGetAttribute(&smCount, hipDeviceAttributeMultiprocessorCount, dev);
        hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, dev);
        size_t freeB = 0, totalB = 0;
        hipMemGetInfo(&freeB, &totalB);
        printf("device %d: %s cc=%d.%d sms=%d/%d warp=%d smem/block=%zu smem/sm=%zu maxThreads=%d\n",
               dev, prop.name, prop.major, prop.minor, prop.multiProcessorCount, smCount, warp,
               prop.sharedMemPerBlock, prop.maxSharedMemoryPerMultiProcessor, prop.maxThreadsPerBlock);
        printf("grid=%dx%dx%d mem=%s managed=%d\n", prop.maxGridSize[0], prop.maxGridSize[1],
               prop.maxGridSize[2], totalB > 0 ? "yes" : "no", prop.managedMemory);
    }
    hipDeviceReset();
    return runtime > 0 && driver > 0 ? 0 : 1;
}
