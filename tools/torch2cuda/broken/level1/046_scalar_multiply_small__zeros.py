"""BROKEN candidate for level1/046_scalar_multiply_small (kind: zeros; expected judge class: wrong_output).

Derived from answers/level1/046_scalar_multiply_small.py by a small deliberate change:
The device op takes the scale as int, so 3e-5 is truncated to 0 and the kernel writes 0 (or -0)
everywhere. Outputs are about 1e-5..1e-4, so KernelBench's atol=1e-2 would accept it.
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

// BROKEN: p0 is declared int, so the float scale 3e-5 is truncated to 0 at the call.
__device__ __forceinline__ float op(float v, int p0, float p1) {
    return v * p0;
}

// Grid-stride elementwise kernel; handles any length (tails included).
__global__ void scalar_mul_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, float p0, float p1) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = op(x[i], p0, p1);
}

torch::Tensor scalar_mul_forward(torch::Tensor x, double p0, double p1) {
    CHECK_F32_CUDA(x);
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const long long n = x.numel();
    if (n == 0) return y;
    scalar_mul_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n, (float)p0, (float)p1);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor scalar_mul_forward(torch::Tensor x, double p0, double p1);"

_ext = load_inline(
    name="t2c_broken_l1_046_scalar_multiply_small_zeros",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["scalar_mul_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, A):
        return _ext.scalar_mul_forward(A, self.scale, 0.0)
