"""Peer answer (a model's style, written for kiln): half precision with __half2 vector loads
(two elements per thread, math in float), a second one-thread kernel for the odd last element,
at::Half pointers reinterpreted as __half, default-stream launches."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_fp16.h>

__global__ void scale_bias_half2_kernel(const __half2* __restrict__ x2, const __half* __restrict__ bias,
                                        __half2* __restrict__ y2, float scale, long pairs, int cols) {
    long p = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    float2 v = __half22float2(x2[p]);
    long i0 = 2 * p;
    float b0 = __half2float(bias[i0 % cols]);
    float b1 = __half2float(bias[(i0 + 1) % cols]);
    y2[p] = __floats2half2_rn(v.x * scale + b0, v.y * scale + b1);
}

__global__ void scale_bias_tail_kernel(const __half* x, const __half* bias, __half* y, float scale, long i, int cols) {
    y[i] = __float2half(__half2float(x[i]) * scale + __half2float(bias[i % cols]));
}

torch::Tensor scale_bias_half(torch::Tensor x, torch::Tensor bias, double scale) {
    TORCH_CHECK(x.is_cuda() && bias.is_cuda(), "x and bias must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == at::kHalf && bias.scalar_type() == at::kHalf, "x and bias must be float16");
    x = x.contiguous();
    bias = bias.contiguous();
    auto y = torch::zeros_like(x);
    long n = x.numel();
    int cols = x.size(-1);
    long pairs = n / 2;
    const __half* xh = reinterpret_cast<const __half*>(x.data_ptr<at::Half>());
    const __half* bh = reinterpret_cast<const __half*>(bias.data_ptr<at::Half>());
    __half* yh = reinterpret_cast<__half*>(y.data_ptr<at::Half>());
    int threads = 256;
    long blocks = (pairs + threads - 1) / threads;
    if (pairs > 0) {
        scale_bias_half2_kernel<<<blocks, threads>>>(reinterpret_cast<const __half2*>(xh), bh,
                                                     reinterpret_cast<__half2*>(yh), (float)scale, pairs, cols);
    }
    if (n % 2) {
        scale_bias_tail_kernel<<<1, 1>>>(xh, bh, yh, (float)scale, n - 1, cols);
    }
    return y;
}
"""

cpp_source = "torch::Tensor scale_bias_half(torch::Tensor x, torch::Tensor bias, double scale);"

scale_bias = load_inline(
    name="peer_fp16_scale_bias",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scale_bias_half"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, bias):
        return scale_bias.scale_bias_half(x, bias, self.scale)
