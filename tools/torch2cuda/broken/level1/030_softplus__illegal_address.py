"""BROKEN candidate for level1/030_softplus (kind: illegal_address; expected judge class: illegal_memory or runtime_error).

Derived from answers/level1/030_softplus.py by a small deliberate change:
Every store goes to y[i + (1LL << 40)], about 4 TiB past the output buffer: an illegal address.
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

__device__ __forceinline__ float op(float v, float p0, float p1) {
    const float z = v * p0;
    return z > p1 ? v : log1pf(expf(z)) / p0;
}

// Grid-stride elementwise kernel; handles any length (tails included).
__global__ void softplus_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, float p0, float p1) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i + (1LL << 40)] = op(x[i], p0, p1);  // BROKEN: far out of bounds
}

torch::Tensor softplus_forward(torch::Tensor x, double p0, double p1) {
    CHECK_F32_CUDA(x);
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const long long n = x.numel();
    if (n == 0) return y;
    softplus_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n, (float)p0, (float)p1);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor softplus_forward(torch::Tensor x, double p0, double p1);"

_ext = load_inline(
    name="t2c_broken_l1_030_softplus_illegal_address",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["softplus_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softplus_forward(x, 1.0, 20.0)
