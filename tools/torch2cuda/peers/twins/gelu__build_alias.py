"""BROKEN twin of peers/answers/gelu__build_alias.py: erf of x instead of x / sqrt(2).

Changed lines are marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline as build

cuda_src = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_FLOAT(x) TORCH_CHECK(x.scalar_type() == torch::kFloat32, #x " must be float32")

__global__ void gelu_erf_kernel(const float* __restrict__ in, float* __restrict__ out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    // exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
    out[i] = 0.5f * v * (1.0f + erff(v));  // BROKEN: the 1/sqrt(2) is missing
}

torch::Tensor gelu_forward(torch::Tensor input) {
    CHECK_CUDA(input);
    CHECK_FLOAT(input);
    auto x = input.contiguous();
    auto out = torch::empty_like(x);
    long n = x.numel();
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    gelu_erf_kernel<<<blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_src = "torch::Tensor gelu_forward(torch::Tensor input);"

gelu_ext = build(
    name="peer_twin_gelu_erf",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["gelu_forward"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.gelu = gelu_ext

    def forward(self, x):
        return self.gelu.gelu_forward(x)
