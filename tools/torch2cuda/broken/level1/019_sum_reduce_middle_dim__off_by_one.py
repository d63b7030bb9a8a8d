"""BROKEN candidate for level1/019_sum_reduce_middle_dim (kind: off_by_one; expected judge class: wrong_output).

Derived from answers/level1/019_sum_reduce_middle_dim.py by a small deliberate change:
The reduction loop runs r < R - 1, so the last of the 2049 reduced rows (2049 = 8 * 256 + 1, handled
by threadIdx.y == 0 alone) is never added: every output is off by one N(0,1) sample, against sums of
magnitude ~45.
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

// x viewed as [outer, R, inner]; y[o, i] = sum_r x[o, r, i]. blockDim = (32, 8).
__global__ void reduce_mid_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int R, int inner) {
    __shared__ float sh[8][33];
    const long long o = blockIdx.y;
    const int i = blockIdx.x * 32 + threadIdx.x;
    float s = 0.f;
    if (i < inner) {
        for (int r = threadIdx.y; r < R - 1; r += 8) s += x[(o * R + r) * inner + i];  // BROKEN: R - 1
    }
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && i < inner) {
        float t = 0.f;
#pragma unroll
        for (int k = 0; k < 8; ++k) t += sh[k][threadIdx.x];
        y[o * inner + i] = t;
    }
}

torch::Tensor sum_dim_keepdim_forward(torch::Tensor x, int64_t dim) {
    CHECK_F32_CUDA(x);
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "sum: bad dim");
    long long outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < nd; ++d) inner *= x.size(d);
    const int R = (int)x.size(dim);
    auto out_sizes = x.sizes().vec();
    out_sizes[dim] = 1;
    auto y = torch::empty(out_sizes, x.options());
    if (outer == 0 || inner == 0) return y;
    TORCH_CHECK(outer <= 65535, "sum: outer extent too large");
    dim3 block(32, 8);
    dim3 grid((unsigned int)((inner + 31) / 32), (unsigned int)outer);
    reduce_mid_sum_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                                                y.data_ptr<float>(), R, (int)inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor sum_dim_keepdim_forward(torch::Tensor x, int64_t dim);"

_ext = load_inline(
    name="t2c_broken_l1_019_sum_reduce_middle_dim_off_by_one",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["sum_dim_keepdim_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return _ext.sum_dim_keepdim_forward(x, self.dim)
