"""Answer for level1/035_max_pool1d_dilated: one thread per output, dilated window with bounds checks."""
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

__global__ void max_pool1d_kernel(const float* __restrict__ x, float* __restrict__ y, long long total, int L,
                                  int OL, int k, int s, int p, int d) {
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int o = (int)(idx % OL);
        const long long nc = idx / OL;
        const float* xp = x + nc * L;
        float m = -INFINITY;
        for (int j = 0; j < k; ++j) {
            const int i = o * s - p + j * d;
            if (i < 0 || i >= L) continue;
            const float v = xp[i];
            if (v > m || v != v) m = v;
        }
        y[idx] = m;
    }
}

torch::Tensor max_pool1d_forward(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d) {
    CHECK_F32_CUDA(x);
    TORCH_CHECK(x.dim() == 3, "max_pool1d: expected [N, C, L]");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1), L = (int)x.size(2);
    const int OL = (int)((L + 2 * p - d * (k - 1) - 1) / s + 1);
    TORCH_CHECK(OL > 0, "max_pool1d: empty output");
    auto y = torch::empty({N, C, OL}, x.options());
    const long long total = y.numel();
    max_pool1d_kernel<<<grid_for(total, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), total, L, OL, (int)k, (int)s, (int)p, (int)d);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor max_pool1d_forward(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d);"

_ext = load_inline(
    name="t2c_l1_035_max_pool1d_dilated",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["max_pool1d_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _single(v):
    return v if isinstance(v, int) else v[0]


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        p = self.pool
        assert not p.ceil_mode and not p.return_indices
        k = _single(p.kernel_size)
        s = _single(p.stride if p.stride is not None else p.kernel_size)
        return _ext.max_pool1d_forward(x, k, s, _single(p.padding), _single(p.dilation))
