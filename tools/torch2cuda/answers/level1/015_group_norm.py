"""Answer for level1/015_group_norm: one block per (sample, group) computing stats and applying the affine."""
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

// One block per (n, g); the group's channels are contiguous: cpg * HW elements.
__global__ void group_norm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, float* __restrict__ y,
                                  int C, int HW, int G, float eps) {
    const int ng = blockIdx.x;
    const int n = ng / G, g = ng % G;
    const int cpg = C / G;
    const long long base = ((long long)n * C + (long long)g * cpg) * HW;
    const long long count = (long long)cpg * HW;
    const float* xp = x + base;
    float* yp = y + base;
    float s = 0.f;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) s += xp[i];
    const float mean = block_reduce_sum(s) / (float)count;
    float q = 0.f;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        const float d = xp[i] - mean;
        q += d * d;
    }
    const float rstd = rsqrtf(block_reduce_sum(q) / (float)count + eps);
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        const int c = g * cpg + (int)(i / HW);
        float v = (xp[i] - mean) * rstd;
        if (gamma != nullptr) v = v * gamma[c] + beta[c];
        yp[i] = v;
    }
}

torch::Tensor group_norm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, int64_t G, double eps) {
    CHECK_F32_CUDA(x);
    TORCH_CHECK(x.dim() >= 2, "group_norm: bad input");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1);
    TORCH_CHECK(G > 0 && C % G == 0, "group_norm: channels not divisible by groups");
    const int HW = (int)(x.numel() / ((long long)N * C));
    const float* gptr = nullptr;
    const float* bptr = nullptr;
    if (gamma.defined() && gamma.numel() > 0) {
        CHECK_F32_CUDA(gamma);
        CHECK_F32_CUDA(beta);
        TORCH_CHECK(gamma.numel() == C && beta.numel() == C, "group_norm: affine size");
        gamma = gamma.contiguous();
        beta = beta.contiguous();
        gptr = gamma.data_ptr<float>();
        bptr = beta.data_ptr<float>();
    }
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    group_norm_kernel<<<(unsigned int)(N * G), 512, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), gptr, bptr, y.data_ptr<float>(), C, HW, (int)G, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = ("torch::Tensor group_norm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, int64_t G, "
           "double eps);")

_ext = load_inline(
    name="t2c_l1_015_group_norm",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["group_norm_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x):
        gn = self.gn
        g = gn.weight if gn.weight is not None else x.new_empty(0)
        b = gn.bias if gn.bias is not None else x.new_empty(0)
        return _ext.group_norm_forward(x, g, b, gn.num_groups, gn.eps)
