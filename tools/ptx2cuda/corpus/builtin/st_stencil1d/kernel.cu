// 1D weighted stencil of radius RADIUS: out[i] = sum_k w[k] * in[i + k - RADIUS]
// with zero padding. Each block stages its BLOCK inputs and the halo in
// shared memory; the tap loop is unrolled.
// Adapted from the cuda-synth corpus program basic_02_stencil1d_radius5
// (weights passed as a parameter instead of __constant__ memory).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef RADIUS
#define RADIUS 5
#endif

__global__ void __launch_bounds__(BLOCK) stencil1d(const float* __restrict__ in, const float* __restrict__ w,
                                                   float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    const int g = blockIdx.x * BLOCK + threadIdx.x;
    const int l = threadIdx.x + RADIUS;
    tile[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        const int left = g - RADIUS;
        const int right = g + BLOCK;
        tile[l - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
        tile[l + BLOCK] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -RADIUS; k <= RADIUS; ++k)
            acc += w[k + RADIUS] * tile[l + k];
        out[g] = acc;
    }
}
