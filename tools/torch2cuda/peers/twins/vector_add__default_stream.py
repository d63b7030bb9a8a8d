"""BROKEN twin of peers/answers/vector_add__default_stream.py: the bound check drops the last element (idx < n - 1): it keeps the 0 of torch::zeros_like.

Changed lines are marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

vector_add_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

// one thread per element
__global__ void vector_add_kernel(const float* x, const float* y, float* z, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n - 1) {  // BROKEN: the last element is never written
        z[tid] = x[tid] + y[tid];
    }
}

torch::Tensor vector_add_cuda(torch::Tensor x, torch::Tensor y) {
    auto n = x.numel();
    auto z = torch::zeros_like(x);

    const int threads = 512;
    const int blocks = (n + threads - 1) / threads;

    vector_add_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), z.data_ptr<float>(), n);

    return z;
}
"""

vector_add_cpp_source = "torch::Tensor vector_add_cuda(torch::Tensor x, torch::Tensor y);"

# Compile the inline CUDA code
vector_add = load_inline(
    name="peer_twin_vector_add",
    cpp_sources=vector_add_cpp_source,
    cuda_sources=vector_add_source,
    functions=["vector_add_cuda"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.vector_add = vector_add

    def forward(self, a, b):
        return self.vector_add.vector_add_cuda(a, b)
