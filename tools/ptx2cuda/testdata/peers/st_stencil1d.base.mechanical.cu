__global__ void stencil1d(const float* __restrict__ in, const float* __restrict__ w, float* __restrict__ out, const int n)
{
    __shared__ float sh[266];
    const int r1 = threadIdx.x;
    const int r2 = (blockIdx.x << 8) + r1;
    float f1 = 0.0f;
    if (r2 < n) f1 = in[r2];
    sh[r1 + 5] = f1;
    if (r1 < 5) {
        const int r4 = r2 - 5;
        float f2 = 0.0f;
        if (r4 >= 0 && r4 < n) f2 = in[r4];
        sh[r1] = f2;
        const int r5 = r2 + 256;
        float f3 = 0.0f;
        if (r5 < n) f3 = in[r5];
        sh[r1 + 261] = f3;
    }
    __syncthreads();
    if (r2 >= n) return;
    float f4 = 0.0f;
#pragma unroll
    for (int r6 = 0; r6 < 11; ++r6)
        f4 = fmaf(w[r6], sh[r1 + r6], f4);
    out[r2] = f4;
}
