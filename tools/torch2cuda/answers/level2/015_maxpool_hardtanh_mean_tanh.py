"""Answer for level2/015_maxpool_hardtanh_mean_tanh: one block per (sample, channel) fusing max-pool, hardtanh, spatial mean and tanh."""
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

// Block (n, c): mean over the OH x OW pooled map of clamp(max over k x k window (stride s), lo, hi), then tanh.
__global__ void pool_hardtanh_mean_tanh_kernel(const float* __restrict__ x, float* __restrict__ y, int H, int W,
                                               int OH, int OW, int k, int s, float lo, float hi) {
    const long long nc = blockIdx.x;
    const float* xp = x + nc * H * W;
    const int P = OH * OW;
    float acc = 0.f;
    for (int p = threadIdx.x; p < P; p += blockDim.x) {
        const int oh = p / OW, ow = p % OW;
        float m = -INFINITY;
        for (int i = 0; i < k; ++i)
            for (int j = 0; j < k; ++j) m = fmaxf(m, xp[(long long)(oh * s + i) * W + (ow * s + j)]);
        acc += fminf(fmaxf(m, lo), hi);
    }
    acc = block_reduce_sum(acc);
    if (threadIdx.x == 0) y[nc] = tanhf(acc / (float)P);
}

torch::Tensor pool_hardtanh_mean_tanh_forward(torch::Tensor x, int64_t k, int64_t s, double lo, double hi) {
    CHECK_F32_CUDA(x);
    TORCH_CHECK(x.dim() == 4, "expected NCHW input");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1), H = (int)x.size(2), W = (int)x.size(3);
    const int OH = (int)((H - k) / s + 1), OW = (int)((W - k) / s + 1);
    TORCH_CHECK(OH > 0 && OW > 0, "max_pool: empty output");
    auto y = torch::empty({N, C, 1, 1}, x.options());
    if ((long long)N * C == 0) return y;
    pool_hardtanh_mean_tanh_kernel<<<(unsigned int)((long long)N * C), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), H, W, OH, OW, (int)k, (int)s, (float)lo, (float)hi);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = ("torch::Tensor pool_hardtanh_mean_tanh_forward(torch::Tensor x, int64_t k, int64_t s, double lo, "
           "double hi);")

_ext = load_inline(
    name="t2c_l2_015_maxpool_hardtanh_mean_tanh",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["pool_hardtanh_mean_tanh_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _first(v):
    return v if isinstance(v, int) else v[0]


class ModelNew(nn.Module):
    def __init__(self, pool_size, min_val, max_val):
        super().__init__()
        self.pool = nn.MaxPool2d(pool_size)
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        p = self.pool
        assert _first(p.padding) == 0 and _first(p.dilation) == 1 and not p.ceil_mode
        k = _first(p.kernel_size)
        s = _first(p.stride if p.stride is not None else p.kernel_size)
        return _ext.pool_hardtanh_mean_tanh_forward(x, k, s, self.min_val, self.max_val)
