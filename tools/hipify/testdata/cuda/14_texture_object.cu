// 2D texture object over a CUDA array, sampled with point filtering.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void sampleTex(cudaTextureObject_t tex, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f) * 2.0f;
}

int main() {
    const int w = 32, h = 16;
    float host[w * h];
    for (int i = 0; i < w * h; ++i) host[i] = (float)(i % 13);
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t arr;
    cudaMallocArray(&arr, &desc, w, h);
    cudaMemcpy2DToArray(arr, 0, 0, host, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    cudaCreateTextureObject(&tex, &res, &td, nullptr);
    float* dout;
    cudaMalloc(&dout, sizeof(host));
    dim3 block(16, 8), grid(w / 16, h / 8);
    sampleTex<<<grid, block>>>(tex, dout, w, h);
    cudaMemcpy(host, dout, sizeof(host), cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < w * h; ++i) sum += host[i];
    printf("sum=%.1f\n", sum);
    cudaDestroyTextureObject(tex);
    cudaFreeArray(arr);
    cudaFree(dout);
    return 0;
}
