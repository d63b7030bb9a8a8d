"""Peer answer (a model's style, written for kiln): the convolution stays with PyTorch (cuDNN)
and a custom kernel fuses the ReLU and the per-channel bias after it; the extension is built
through `import torch.utils.cpp_extension as cpp_ext`; default-stream launch."""
import torch
import torch.nn as nn
import torch.utils.cpp_extension as cpp_ext

epilogue_src = """
#include <torch/extension.h>

__global__ void relu_add_bias_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                     float* __restrict__ out, int total, int channels, int hw) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total) {
        int c = (idx / hw) % channels;
        out[idx] = fmaxf(x[idx], 0.0f) + bias[c];
    }
}

torch::Tensor relu_add_bias(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    auto xc = x.contiguous();
    auto b = bias.contiguous().view({-1});
    auto out = torch::empty_like(xc);
    int total = xc.numel();
    int channels = xc.size(1);
    int hw = xc.size(2) * xc.size(3);
    int block = 256;
    int grid = (total + block - 1) / block;
    relu_add_bias_kernel<<<grid, block>>>(xc.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
                                          total, channels, hw);
    return out;
}
"""

epilogue = cpp_ext.load_inline(
    name="peer_conv_relu_bias_epilogue",
    cpp_sources="torch::Tensor relu_add_bias(torch::Tensor x, torch::Tensor bias);",
    cuda_sources=epilogue_src,
    functions=["relu_add_bias"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        return epilogue.relu_add_bias(x, self.bias)
