"""BROKEN candidate for level1/048_elementwise_maximum (kind: wrong_shape; expected judge class: wrong_shape).

Derived from answers/level1/048_elementwise_maximum.py by a small deliberate change:
The output is allocated flat, torch::empty({n}), so the values are right in memory order but the
result has shape [n] instead of [4096, 4099].
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

__device__ __forceinline__ float op(float a, float b, float p0) {
    if (a != a || b != b) return a + b;  // propagate NaN
    return a > b ? a : b;
}

// Grid-stride elementwise kernel over two same-shaped tensors.
__global__ void maximum_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                            long long n, float p0) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = op(a[i], b[i], p0);
}

torch::Tensor maximum_forward(torch::Tensor a, torch::Tensor b, double p0) {
    CHECK_F32_CUDA(a);
    CHECK_F32_CUDA(b);
    TORCH_CHECK(a.sizes() == b.sizes(), "maximum: shapes must match");
    const at::cuda::OptionalCUDAGuard guard(device_of(a));
    a = a.contiguous();
    b = b.contiguous();
    const long long n = a.numel();
    auto y = torch::empty({n}, a.options());  // BROKEN: flat output instead of empty_like(a)
    if (n == 0) return y;
    maximum_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n, (float)p0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor maximum_forward(torch::Tensor a, torch::Tensor b, double p0);"

_ext = load_inline(
    name="t2c_broken_l1_048_elementwise_maximum_wrong_shape",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["maximum_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.maximum_forward(a, b, 0.0)
