// 2D convolution (correlation) of a width x height image with a
// (2R+1) x (2R+1) filter and zero padding. Each BX x BY block loads its
// tile and a halo of R cells into dynamic shared memory
// ((BX + 2R) * (BY + 2R) floats); the filter loops are unrolled.
// Adapted from the cuda-synth corpus program basic_04_conv2d_filter7
// (filter passed as a parameter instead of __constant__ memory).
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif
#ifndef R
#define R 3
#endif

#define KS (2 * R + 1)

__global__ void __launch_bounds__(BX * BY) conv2d_tile(const float* __restrict__ img, const float* __restrict__ filt,
                                                       float* __restrict__ out, int width, int height)
{
    extern __shared__ float tile[];
    const int tw = BX + 2 * R, th = BY + 2 * R;
    const int ox = blockIdx.x * BX - R, oy = blockIdx.y * BY - R;
    for (int ty = threadIdx.y; ty < th; ty += BY)
        for (int tx = threadIdx.x; tx < tw; tx += BX) {
            const int gx = ox + tx, gy = oy + ty;
            tile[ty * tw + tx] = gx >= 0 && gx < width && gy >= 0 && gy < height ? img[gy * width + gx] : 0.0f;
        }
    __syncthreads();
    const int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    if (x >= width || y >= height)
        return;
    float sum = 0.0f;
#pragma unroll
    for (int fy = 0; fy < KS; ++fy)
#pragma unroll
        for (int fx = 0; fx < KS; ++fx)
            sum += filt[fy * KS + fx] * tile[(threadIdx.y + fy) * tw + threadIdx.x + fx];
    out[y * width + x] = sum;
}
