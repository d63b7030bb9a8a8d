// Wrong on purpose: the halo is never loaded, so every block's edges read
// zeros (wrong_output).
#define BLOCK 256
#define RADIUS 5
__global__ void __launch_bounds__(BLOCK) stencil1d(const float* __restrict__ in, const float* __restrict__ w,
                                                   float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    const int g = blockIdx.x * BLOCK + threadIdx.x;
    const int l = threadIdx.x + RADIUS;
    tile[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        tile[l - RADIUS] = 0.0f;
        tile[l + BLOCK] = 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k)
            acc += w[k + RADIUS] * tile[l + k];
        out[g] = acc;
    }
}
