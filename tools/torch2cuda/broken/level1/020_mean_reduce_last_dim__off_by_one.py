"""BROKEN candidate for level1/020_mean_reduce_last_dim (kind: off_by_one; expected judge class: wrong_output).

Derived from answers/level1/020_mean_reduce_last_dim.py by a small deliberate change:
The row loop runs j < D - 1, so the last of the 1031 columns is left out of every row sum while the
divisor is still D. Each mean is off by x_last / 1031 (up to ~4e-3): about 60 of the 16384 rows
exceed atol = 1e-3 * max|ref| (~4e-4) + rtol * |ref| (~2.5e-3) per trial, though KernelBench's
atol=1e-2 would pass it.
Changed lines are marked BROKEN.
"""
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

// blockDim 256 = 8 warps, one row per warp.
__global__ void mean_last_kernel(const float* __restrict__ x, float* __restrict__ y, long long rows, int D) {
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;  // whole warp exits together
    const float* xr = x + row * D;
    float s = 0.f;
    for (int j = lane; j < D - 1; j += 32) s += xr[j];  // BROKEN: D - 1 drops the last column
    s = warp_reduce_sum(s);
    if (lane == 0) y[row] = s / (float)D;
}

torch::Tensor mean_last_forward(torch::Tensor x) {
    CHECK_F32_CUDA(x);
    TORCH_CHECK(x.dim() >= 1, "mean: bad input");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    const int D = (int)x.size(-1);
    TORCH_CHECK(D > 0, "mean: empty reduction");
    const long long rows = x.numel() / D;
    auto out_sizes = x.sizes().vec();
    out_sizes.pop_back();
    auto y = torch::empty(out_sizes, x.options());
    if (rows == 0) return y;
    mean_last_kernel<<<(unsigned int)((rows + 7) / 8), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor mean_last_forward(torch::Tensor x);"

_ext = load_inline(
    name="t2c_broken_l1_020_mean_reduce_last_dim_off_by_one",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["mean_last_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.mean_last_forward(x)
