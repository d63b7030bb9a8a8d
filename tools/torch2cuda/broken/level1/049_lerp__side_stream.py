"""BROKEN candidate for level1/049_lerp (kind: side_stream; expected judge class: suspected_cheating or wrong_output).

Derived from answers/level1/049_lerp.py by a small deliberate change:
The kernel is launched on a stream made by cudaStreamCreateWithFlags(cudaStreamNonBlocking) in the
wrapper, with no event or sync tying it to the current stream (not even the implicit legacy-default-
stream ordering); the stream is destroyed at once, which does not wait. The caller can read the
output before the kernel has written it, and the kernel can read inputs before they are ready.
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
    const float d = b - a;
    return (fabsf(p0) < 0.5f) ? fmaf(p0, d, a) : b - d * (1.f - p0);
}

// Grid-stride elementwise kernel over two same-shaped tensors.
__global__ void lerp_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                            long long n, float p0) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = op(a[i], b[i], p0);
}

torch::Tensor lerp_forward(torch::Tensor a, torch::Tensor b, double p0) {
    CHECK_F32_CUDA(a);
    CHECK_F32_CUDA(b);
    TORCH_CHECK(a.sizes() == b.sizes(), "lerp: shapes must match");
    const at::cuda::OptionalCUDAGuard guard(device_of(a));
    a = a.contiguous();
    b = b.contiguous();
    auto y = torch::empty_like(a);
    const long long n = a.numel();
    if (n == 0) return y;
    // BROKEN: a fresh non-blocking stream, never synchronised with the current stream.
    cudaStream_t side;
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    lerp_kernel<<<grid_for(n, 256), 256, 0, side>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n, (float)p0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    C10_CUDA_CHECK(cudaStreamDestroy(side));  // returns at once; the kernel may still be running
    return y;
}
"""

CPP_SRC = "torch::Tensor lerp_forward(torch::Tensor a, torch::Tensor b, double p0);"

_ext = load_inline(
    name="t2c_broken_l1_049_lerp_side_stream",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["lerp_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight

    def forward(self, a, b):
        return _ext.lerp_forward(a, b, self.weight)
