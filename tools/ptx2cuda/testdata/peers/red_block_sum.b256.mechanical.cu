__global__ void block_sum(const float* in, float* partial, int n)
{
    __shared__ float s[256];
    unsigned r1 = threadIdx.x;
    unsigned r2 = (blockIdx.x << 9) | r1;
    float f1 = 0.0f;
    if (r2 < (unsigned)n) f1 = in[r2];
    unsigned r3 = r2 + 256;
    if (r3 < (unsigned)n) f1 = f1 + in[r3];
    s[r1] = f1;
    __syncthreads();
    if (r1 < 128) s[r1] = s[r1] + s[r1 + 128];
    __syncthreads();
    if (r1 < 64) s[r1] = s[r1] + s[r1 + 64];
    __syncthreads();
    if (r1 < 32) s[r1] = s[r1] + s[r1 + 32];
    __syncthreads();
    if (r1 < 16) s[r1] = s[r1] + s[r1 + 16];
    __syncthreads();
    if (r1 < 8) s[r1] = s[r1] + s[r1 + 8];
    __syncthreads();
    if (r1 < 4) s[r1] = s[r1] + s[r1 + 4];
    __syncthreads();
    if (r1 < 2) s[r1] = s[r1] + s[r1 + 2];
    __syncthreads();
    if (r1 < 1) s[r1] = s[r1] + s[r1 + 1];
    __syncthreads();
    if (r1 != 0) return;
    partial[blockIdx.x] = s[0];
}
