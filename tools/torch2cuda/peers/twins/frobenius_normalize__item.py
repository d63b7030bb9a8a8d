"""BROKEN twin of peers/answers/frobenius_normalize__item.py: divides by the sum of squares, not by its square root.

Changed lines are marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

frob_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cmath>
#include <algorithm>

__global__ void sum_squares_kernel(const float* x, float* acc, long n) {
    __shared__ float cache[256];
    int tid = threadIdx.x;
    float s = 0.0f;
    for (long i = (long)blockIdx.x * blockDim.x + tid; i < n; i += (long)gridDim.x * blockDim.x) {
        float v = x[i];
        s += v * v;
    }
    cache[tid] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) cache[tid] += cache[tid + stride];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(acc, cache[0]);
}

__global__ void scale_kernel(const float* x, float* y, float inv_norm, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * inv_norm;
}

torch::Tensor frobenius_normalize_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    long n = x.numel();
    auto acc = torch::zeros({1}, x.options());
    const int threads = 256;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 4096);
    sum_squares_kernel<<<blocks, threads>>>(x.data_ptr<float>(), acc.data_ptr<float>(), n);
    float norm = acc.item<float>();  // BROKEN: no square root
    auto out = torch::empty_like(x);
    long out_blocks = (n + threads - 1) / threads;
    scale_kernel<<<out_blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), 1.0f / norm, n);
    return out;
}
"""

frob_cpp = "torch::Tensor frobenius_normalize_cuda(torch::Tensor x);"

frob = load_inline(
    name="peer_twin_frobenius_item",
    cpp_sources=frob_cpp,
    cuda_sources=frob_source,
    functions=["frobenius_normalize_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.frob = frob

    def forward(self, x):
        return self.frob.frobenius_normalize_cuda(x)
