// Decompiled from PTX: each thread updates up to 4 elements spaced 256 apart
// inside its block's 1024-element chunk.
__global__ void saxpy(int n, float a, const float* x, float* y)
{
    int idx = blockIdx.x * 1024 + threadIdx.x;
    const int chunkEnd = idx + 1024;
    while (idx < chunkEnd && idx < n) {
        y[idx] = a * x[idx] + y[idx];
        idx += 256;
    }
}
