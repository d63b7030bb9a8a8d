"""Kernel that never terminates."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

__global__ void scale_relu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, int spin) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float v = 2.0f * x[i];
        for (int s = 0; s < spin; ++s) v = v * 1.0000001f - 1e-30f;  // optional busy work
        y[i] = v > 0.f ? v : 0.f;
    }
}

__global__ void oob_kernel(float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i + (1LL << 38)] = 1.f;
}

__global__ void spin_forever_kernel(volatile int* flag) {
    while (*flag == 0) { }
}

__global__ void touch_kernel(float* y) { }

static cudaStream_t side_stream() {
    static cudaStream_t s = nullptr;
    if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
}

static cudaStream_t blocking_side_stream() {
    static cudaStream_t s = nullptr;
    if (!s) cudaStreamCreate(&s);
    return s;
}

torch::Tensor scale_relu(torch::Tensor x, int64_t mode) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "x must be a float CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long long n = xc.numel();
    int threads = 256;
    int blocks = (int)std::min<long long>((n + threads - 1) / threads, 65535LL * 8);
    cudaStream_t cur = at::cuda::getCurrentCUDAStream();
    if (mode == 0) {          // honest
        scale_relu_kernel<<<blocks, threads, 0, cur>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n, 0);
    } else if (mode == 1) {   // side stream, never joined, with busy work
        scale_relu_kernel<<<blocks, threads, 0, side_stream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n, 200);
    } else if (mode == 2) {   // out-of-bounds write
        oob_kernel<<<blocks, threads, 0, cur>>>(y.data_ptr<float>(), n);
    } else if (mode == 3) {   // never terminates
        auto flag = torch::zeros({1}, x.options().dtype(at::kInt));
        spin_forever_kernel<<<1, 1, 0, cur>>>(flag.data_ptr<int>());
    } else if (mode == 4) {   // honest, on the legacy default stream (KernelBench's style)
        scale_relu_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n, 0);
    } else if (mode == 5) {   // a blocking stream of its own, never joined, with busy work
        scale_relu_kernel<<<blocks, threads, 0, blocking_side_stream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n, 200);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor touch(torch::Tensor y) {
    touch_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor scale_relu(torch::Tensor x, int64_t mode);\ntorch::Tensor touch(torch::Tensor y);"

_ext = load_inline(name="judge_gpu_test", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["scale_relu", "touch"], verbose=False, extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.scale_relu(x, 3)
