"""BROKEN twin of peers/answers/selu__dispatch_template.py: the negative branch leaves out the scale.

Changed lines are marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

selu_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/Dispatch.h>

template <typename scalar_t>
__global__ void selu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
    const scalar_t alpha = static_cast<scalar_t>(1.6732632423543772848170429916717);
    const scalar_t scale = static_cast<scalar_t>(1.0507009873554804934193349852946);
    int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (; i < n; i += stride) {
        scalar_t v = x[i];
        y[i] = v > scalar_t(0) ? scale * v : alpha * expm1(v);  // BROKEN: no scale on the negative side
    }
}

torch::Tensor selu_cuda(torch::Tensor input) {
    TORCH_CHECK(input.device().is_cuda(), "input must be a CUDA tensor");
    auto x = input.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "selu_cuda", ([&] {
        selu_kernel<scalar_t><<<blocks, threads, 0, stream>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    }));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

selu_cpp = "torch::Tensor selu_cuda(torch::Tensor input);"

selu_ext = load_inline(
    name="peer_twin_selu_dispatch",
    cpp_sources=selu_cpp,
    cuda_sources=selu_source,
    functions=["selu_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return selu_ext.selu_cuda(x)
