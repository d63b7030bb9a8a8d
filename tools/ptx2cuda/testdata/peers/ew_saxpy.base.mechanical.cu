__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    unsigned int r1 = blockIdx.x;
    unsigned int r2 = threadIdx.x;
    int r3 = (int)(r1 << 10) + (int)r2;
    int r4 = 0;
    do {
        int r5 = r3 + (r4 << 8);
        if (r5 < n) {
            float f1 = __ldg(x + r5);
            float f2 = y[r5];
            y[r5] = fmaf(a, f1, f2);
        }
        r4 = r4 + 1;
    } while (r4 != 4);
}
