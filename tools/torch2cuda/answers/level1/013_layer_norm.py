"""Answer for level1/013_layer_norm: one block per row, two-pass mean/variance LayerNorm kernel."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>

#define CHECK_F32_CUDA(x)                                                   \
    TORCH_CHECK((x).is_cuda(), #x " must be a CUDA tensor");                \
    TORCH_CHECK((x).scalar_type() == at::kFloat, #x " must be float32")

// Number of blocks for a grid-stride loop over n items (at least 1, capped).
static inline unsigned int grid_for(long long n, int threads) {
    long long g = (n + threads - 1) / threads;
    if (g < 1) g = 1;
    if (g > 1048576) g = 1048576;
    return (unsigned int)g;
}
__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_reduce_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum over the whole block; blockDim.x must be a multiple of 32 (<= 1024).
// Every thread of the block receives the result.
__device__ float block_reduce_sum(float v) {
    __shared__ float sh_red_sum[32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nw = blockDim.x >> 5;
    v = warp_reduce_sum(v);
    if (lane == 0) sh_red_sum[wid] = v;
    __syncthreads();
    if (wid == 0) {
        float r = (lane < nw) ? sh_red_sum[lane] : 0.f;
        r = warp_reduce_sum(r);
        if (lane == 0) sh_red_sum[0] = r;
    }
    __syncthreads();
    const float r = sh_red_sum[0];
    __syncthreads();
    return r;
}

// Max over the whole block; same contract as block_reduce_sum.
__device__ float block_reduce_max(float v) {
    __shared__ float sh_red_max[32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nw = blockDim.x >> 5;
    v = warp_reduce_max(v);
    if (lane == 0) sh_red_max[wid] = v;
    __syncthreads();
    if (wid == 0) {
        float r = (lane < nw) ? sh_red_max[lane] : -INFINITY;
        r = warp_reduce_max(r);
        if (lane == 0) sh_red_max[0] = r;
    }
    __syncthreads();
    const float r = sh_red_max[0];
    __syncthreads();
    return r;
}
// Row-wise LayerNorm over the last dimension D: one block per row, two-pass
// variance. y = act((x - mean) * rstd * gamma + beta); act: 0 none, 1 gelu(erf).
// gamma/beta may be null.
__global__ void layernorm_rows_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                      const float* __restrict__ beta, float* __restrict__ y,
                                      int rows, int D, float eps, int act) {
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (long long)row * D;
    float* yr = y + (long long)row * D;
    float s = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) s += xr[j];
    const float mean = block_reduce_sum(s) / (float)D;
    float q = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        const float d = xr[j] - mean;
        q += d * d;
    }
    const float var = block_reduce_sum(q) / (float)D;
    const float rstd = rsqrtf(var + eps);
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        float v = (xr[j] - mean) * rstd;
        if (gamma != nullptr) v *= gamma[j];
        if (beta != nullptr) v += beta[j];
        if (act == 1) v = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
        yr[j] = v;
    }
}

// LayerNorm over the last dim of x (any leading shape); empty gamma/beta mean none.
static torch::Tensor layernorm_rows(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps,
                                    int act) {
    CHECK_F32_CUDA(x);
    TORCH_CHECK(x.dim() >= 1, "layernorm: bad input");
    x = x.contiguous();
    const int D = (int)x.size(-1);
    const long long rows = D > 0 ? x.numel() / D : 0;
    TORCH_CHECK(rows <= 2147483647LL, "layernorm: too many rows");
    const float* gptr = nullptr;
    const float* bptr = nullptr;
    if (gamma.defined() && gamma.numel() > 0) {
        CHECK_F32_CUDA(gamma);
        TORCH_CHECK(gamma.numel() == D, "layernorm: gamma size");
        gamma = gamma.contiguous();
        gptr = gamma.data_ptr<float>();
    }
    if (beta.defined() && beta.numel() > 0) {
        CHECK_F32_CUDA(beta);
        TORCH_CHECK(beta.numel() == D, "layernorm: beta size");
        beta = beta.contiguous();
        bptr = beta.data_ptr<float>();
    }
    auto y = torch::empty_like(x);
    if (rows == 0) return y;
    const int threads = D >= 2048 ? 512 : 256;
    layernorm_rows_kernel<<<(unsigned int)rows, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), gptr, bptr, y.data_ptr<float>(), (int)rows, D, (float)eps, act);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    return layernorm_rows(x, gamma, beta, eps, 0);
}
"""

CPP_SRC = "torch::Tensor layer_norm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps);"

_ext = load_inline(
    name="t2c_l1_013_layer_norm",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["layer_norm_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        ln = self.ln
        assert len(ln.normalized_shape) == 1
        g = ln.weight if ln.weight is not None else x.new_empty(0)
        b = ln.bias if ln.bias is not None else x.new_empty(0)
        return _ext.layer_norm_forward(x, g, b, ln.eps)
