"""BROKEN candidate for level1/045_broadcast_add (kind: compile_error; expected judge class: compile_error).

Derived from answers/level1/045_broadcast_add.py by a small deliberate change:
The kernel uses an undeclared identifier (inner_size instead of its parameter inner), so nvcc fails.
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

__global__ void channel_add_kernel(const float* __restrict__ x, const float* __restrict__ c_vals,
                                   float* __restrict__ y, long long n, int C, long long inner) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)((i / inner_size) % C);  // BROKEN: inner_size is not declared
        y[i] = x[i] + c_vals[c];
    }
}

// x [N, C, d2, d3, ...], y with C elements broadcast along dim 1 (e.g. shape [C,1,1]).
torch::Tensor broadcast_add_forward(torch::Tensor x, torch::Tensor yv) {
    CHECK_F32_CUDA(x);
    CHECK_F32_CUDA(yv);
    TORCH_CHECK(x.dim() >= 2, "broadcast_add: x must have a channel dimension");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    const int C = (int)x.size(1);
    TORCH_CHECK(yv.numel() == C && yv.dim() == x.dim() - 1 && yv.size(0) == C,
                "broadcast_add: y must be [C, 1, ...]");
    x = x.contiguous();
    yv = yv.contiguous();
    long long inner = 1;
    for (int64_t d = 2; d < x.dim(); ++d) inner *= x.size(d);
    auto out = torch::empty_like(x);
    const long long n = x.numel();
    if (n == 0) return out;
    channel_add_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), yv.data_ptr<float>(), out.data_ptr<float>(), n, C, inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor broadcast_add_forward(torch::Tensor x, torch::Tensor yv);"

_ext = load_inline(
    name="t2c_broken_l1_045_broadcast_add_compile_error",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["broadcast_add_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return _ext.broadcast_add_forward(x, y)
