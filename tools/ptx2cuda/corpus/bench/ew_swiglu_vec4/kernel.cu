// SwiGLU gate: out = silu(a) * b elementwise, four elements per thread
// through float4 loads and stores (n4 = n / 4 vectors).
#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }

__global__ void __launch_bounds__(BLOCK) swiglu_vec4(const float4* __restrict__ a, const float4* __restrict__ b,
                                                     float4* __restrict__ out, int n4)
{
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n4)
        return;
    const float4 x = a[i], g = b[i];
    float4 r;
    r.x = silu(x.x) * g.x;
    r.y = silu(x.y) * g.y;
    r.z = silu(x.z) * g.z;
    r.w = silu(x.w) * g.w;
    out[i] = r;
}
