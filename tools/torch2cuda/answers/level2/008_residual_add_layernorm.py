"""Answer for level2/008_residual_add_layernorm: one block per row fusing the residual add with a two-pass LayerNorm."""
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

// Pass 1 writes s = x + y into out (each thread later re-reads only the elements it wrote),
// pass 2 computes the variance, pass 3 normalizes in place.
__global__ void add_layernorm_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                     const float* __restrict__ gamma, const float* __restrict__ beta,
                                     float* __restrict__ out, int D, float eps) {
    const long long row = blockIdx.x;
    const float* xr = x + row * D;
    const float* yr = y + row * D;
    float* o = out + row * D;
    float s = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        const float v = xr[j] + yr[j];
        o[j] = v;
        s += v;
    }
    const float mean = block_reduce_sum(s) / (float)D;
    float q = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        const float d = o[j] - mean;
        q += d * d;
    }
    const float rstd = rsqrtf(block_reduce_sum(q) / (float)D + eps);
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        float v = (o[j] - mean) * rstd;
        if (gamma != nullptr) v *= gamma[j];
        if (beta != nullptr) v += beta[j];
        o[j] = v;
    }
}

torch::Tensor add_layernorm_forward(torch::Tensor x, torch::Tensor y, torch::Tensor gamma, torch::Tensor beta,
                                    double eps) {
    CHECK_F32_CUDA(x);
    CHECK_F32_CUDA(y);
    TORCH_CHECK(x.sizes() == y.sizes() && x.dim() >= 1, "add_layernorm: shapes must match");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    y = y.contiguous();
    const int D = (int)x.size(-1);
    const long long rows = D > 0 ? x.numel() / D : 0;
    const float* gptr = nullptr;
    const float* bptr = nullptr;
    if (gamma.defined() && gamma.numel() > 0) {
        CHECK_F32_CUDA(gamma);
        TORCH_CHECK(gamma.numel() == D, "add_layernorm: gamma size");
        gamma = gamma.contiguous();
        gptr = gamma.data_ptr<float>();
    }
    if (beta.defined() && beta.numel() > 0) {
        CHECK_F32_CUDA(beta);
        TORCH_CHECK(beta.numel() == D, "add_layernorm: beta size");
        beta = beta.contiguous();
        bptr = beta.data_ptr<float>();
    }
    auto out = torch::empty_like(x);
    if (rows == 0) return out;
    add_layernorm_kernel<<<(unsigned int)rows, 512, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), gptr, bptr, out.data_ptr<float>(), D, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = ("torch::Tensor add_layernorm_forward(torch::Tensor x, torch::Tensor y, torch::Tensor gamma, "
           "torch::Tensor beta, double eps);")

_ext = load_inline(
    name="t2c_l2_008_residual_add_layernorm",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["add_layernorm_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x, y):
        ln = self.ln
        g = ln.weight if ln.weight is not None else x.new_empty(0)
        b = ln.bias if ln.bias is not None else x.new_empty(0)
        return _ext.add_layernorm_forward(x, y, g, b, ln.eps)
