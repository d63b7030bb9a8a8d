// Decompiled triton_red_fused__softmax_exp_prepare_softmax_online_sub_0:
// softmax over the last dimension (r0_numel) of xnumel rows, a block per row.
__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    __syncthreads();
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    v = lane < warps ? part[lane] : (is_max ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    return v;
}

__global__ void triton_red_fused__softmax_exp_prepare_softmax_online_sub_0(const float* in_ptr0, float* out_ptr2, int xnumel, int r0_numel)
{
    for (int row = blockIdx.x; row < xnumel; row += gridDim.x) {
        const float* x = in_ptr0 + (long long)row * r0_numel;
        float* y = out_ptr2 + (long long)row * r0_numel;
        float m = -INFINITY;
        for (int j = threadIdx.x; j < r0_numel; j += blockDim.x)
            m = fmaxf(m, x[j]);
        m = block_reduce(m, true);
        float s = 0.0f;
        for (int j = threadIdx.x; j < r0_numel; j += blockDim.x)
            s += expf(x[j] - m);
        s = block_reduce(s, false);
        for (int j = threadIdx.x; j < r0_numel; j += blockDim.x)
            y[j] = expf(x[j] - m) / s;
    }
}
