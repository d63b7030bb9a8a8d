// out = gelu(x + bias[col]) over a rows x cols matrix (tanh approximation
// of GELU), one thread per element on a 2D grid of BX x BY blocks.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif

__device__ __forceinline__ float gelu_tanh(float v)
{
    const float k0 = 0.7978845608028654f;  // sqrt(2 / pi)
    const float k1 = 0.044715f;
    return 0.5f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));
}

__global__ void __launch_bounds__(BX * BY) bias_gelu(const float* __restrict__ x, const float* __restrict__ bias,
                                                     float* __restrict__ out, int rows, int cols)
{
    const int c = blockIdx.x * BX + threadIdx.x;
    const int r = blockIdx.y * BY + threadIdx.y;
    if (r < rows && c < cols)
        out[r * cols + c] = gelu_tanh(x[r * cols + c] + bias[c]);
}
