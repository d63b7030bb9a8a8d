// 2D texture object over a CUDA array, sampled with point filtering.
#include <cstdio>
#include <hip/hip_runtime.h>

__global__ void sampleTex(hipTextureObject_t tex, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f) * 2.0f;
}

int main() {
    const int w = 32, h = 16;
    float host[w * h];
    for (int i = 0; i < w * h; ++i) host[i] = (float)(i % 13);
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t arr;
    hipMallocArray(&arr, &desc, w, h);
    hipMemcpy2DToArray(arr, 0, 0, host, w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice);
    hipResourceDesc res = {};
    res.resType = hipResourceTypeArray;
    res.res.array.array = arr;
    hipTextureDesc td = {};
    td.addressMode[0] = hipAddressModeClamp;
    td.addressMode[1] = hipAddressModeClamp;
    td.filterMode = hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    td.normalizedCoords = 0;
    hipTextureObject_t tex = 0;
    hipCreateTextureObject(&tex, &res, &td, nullptr);
    float* dout;
    hipMalloc(&dout, sizeof(host));
    dim3 block(16, 8), grid(w / 16, h / 8);
    sampleTex<<<grid, block>>>(tex, dout, w, h);
    hipMemcpy(host, dout, sizeof(host), hipMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < w * h; ++i) sum += host[i];
    printf("sum=%.1f\n", sum);
    hipDestroyTextureObject(tex);
    hipFreeArray(arr);
    hipFree(dout);
    return 0;
}
