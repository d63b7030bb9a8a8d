"""Peer answer (a model's style, written for kiln): a bfloat16 kernel (__nv_bfloat16, math in
float, fast __expf), grid-stride, launched on the current stream with a device guard."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

silu_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

__global__ void silu_bf16_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = __bfloat162float(x[i]);
        y[i] = __float2bfloat16(v / (1.0f + __expf(-v)));
    }
}

torch::Tensor silu_bf16(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be on the GPU");
    TORCH_CHECK(x.scalar_type() == at::kBFloat16, "x must be bfloat16");
    const at::cuda::CUDAGuard guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 8192);
    silu_bf16_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __nv_bfloat16*>(xc.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>()), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

silu_cpp = "torch::Tensor silu_bf16(torch::Tensor x);"

silu = load_inline(name="peer_bf16_silu", cpp_sources=silu_cpp, cuda_sources=silu_src, functions=["silu_bf16"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return silu.silu_bf16(x)
