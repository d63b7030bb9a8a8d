"""BROKEN candidate for level2/009_scale_shift_clamp (kind: inplace_input; expected judge class: suspected_cheating or wrong_output).

Derived from answers/level2/009_scale_shift_clamp.py by a small deliberate change:
forward clones x, scales the caller's x in place (x.mul_(2), using it as scratch), then computes the
correct result from the clone: output right, input modified.
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

__global__ void scale_shift_clamp_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                         const float* __restrict__ b, float* __restrict__ y, long long n, int C,
                                         long long HW, float lo, float hi) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)((i / HW) % C);
        const float v = x[i] * w[c] + b[c];
        y[i] = fminf(fmaxf(v, lo), hi);
    }
}

torch::Tensor scale_shift_clamp_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double lo, double hi) {
    CHECK_F32_CUDA(x);
    CHECK_F32_CUDA(w);
    CHECK_F32_CUDA(b);
    TORCH_CHECK(x.dim() == 4, "expected NCHW input");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    const int C = (int)x.size(1);
    TORCH_CHECK(w.numel() == C && b.numel() == C, "per-channel parameters must have C elements");
    x = x.contiguous();
    w = w.contiguous();
    b = b.contiguous();
    auto y = torch::empty_like(x);
    const long long n = x.numel();
    if (n == 0) return y;
    scale_shift_clamp_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n, C,
        x.size(2) * x.size(3), (float)lo, (float)hi);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = ("torch::Tensor scale_shift_clamp_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double lo, "
           "double hi);")

_ext = load_inline(
    name="t2c_broken_l2_009_scale_shift_clamp_inplace_input",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["scale_shift_clamp_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, 1, 1))
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x):
        x_orig = x.clone()
        x.mul_(2.0)  # BROKEN: scribbles on the caller's input
        return _ext.scale_shift_clamp_forward(x_orig, self.weight, self.bias, -1.0, 1.0)
