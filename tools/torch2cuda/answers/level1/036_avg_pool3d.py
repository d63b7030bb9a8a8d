"""Answer for level1/036_avg_pool3d: one thread per output voxel, PyTorch's padded-window divisor rules."""
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

__global__ void avg_pool3d_kernel(const float* __restrict__ x, float* __restrict__ y, long long total,
                                  int D, int H, int W, int OD, int OH, int OW,
                                  int kd, int kh, int kw, int sd, int sh, int sw, int pd, int ph, int pw,
                                  int count_include_pad) {
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int ow = (int)(idx % OW);
        long long t = idx / OW;
        const int oh = (int)(t % OH);
        t /= OH;
        const int od = (int)(t % OD);
        const long long nc = t / OD;
        int ds = od * sd - pd, hs = oh * sh - ph, ws = ow * sw - pw;
        int de = min(ds + kd, D + pd), he = min(hs + kh, H + ph), we = min(ws + kw, W + pw);
        const int pool_size = (de - ds) * (he - hs) * (we - ws);
        ds = max(ds, 0); hs = max(hs, 0); ws = max(ws, 0);
        de = min(de, D); he = min(he, H); we = min(we, W);
        if (ds >= de || hs >= he || ws >= we) {
            y[idx] = 0.f;
            continue;
        }
        const float* xp = x + nc * D * H * W;
        float s = 0.f;
        for (int id = ds; id < de; ++id)
            for (int ih = hs; ih < he; ++ih)
                for (int iw = ws; iw < we; ++iw) s += xp[((long long)id * H + ih) * W + iw];
        const int div = count_include_pad ? pool_size : (de - ds) * (he - hs) * (we - ws);
        y[idx] = s / (float)div;
    }
}

torch::Tensor avg_pool3d_forward(torch::Tensor x, std::vector<int64_t> k, std::vector<int64_t> s,
                                 std::vector<int64_t> p, bool count_include_pad) {
    CHECK_F32_CUDA(x);
    TORCH_CHECK(x.dim() == 5, "avg_pool3d: expected NCDHW");
    TORCH_CHECK(k.size() == 3 && s.size() == 3 && p.size() == 3, "avg_pool3d: bad params");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1), D = (int)x.size(2), H = (int)x.size(3), W = (int)x.size(4);
    const int OD = (int)((D + 2 * p[0] - k[0]) / s[0] + 1);
    const int OH = (int)((H + 2 * p[1] - k[1]) / s[1] + 1);
    const int OW = (int)((W + 2 * p[2] - k[2]) / s[2] + 1);
    TORCH_CHECK(OD > 0 && OH > 0 && OW > 0, "avg_pool3d: empty output");
    auto y = torch::empty({N, C, OD, OH, OW}, x.options());
    const long long total = y.numel();
    avg_pool3d_kernel<<<grid_for(total, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), total, D, H, W, OD, OH, OW, (int)k[0], (int)k[1], (int)k[2],
        (int)s[0], (int)s[1], (int)s[2], (int)p[0], (int)p[1], (int)p[2], count_include_pad ? 1 : 0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = ("torch::Tensor avg_pool3d_forward(torch::Tensor x, std::vector<int64_t> k, std::vector<int64_t> s, "
           "std::vector<int64_t> p, bool count_include_pad);")

_ext = load_inline(
    name="t2c_l1_036_avg_pool3d",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["avg_pool3d_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _triple(v):
    return [v, v, v] if isinstance(v, int) else list(v)


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride)

    def forward(self, x):
        p = self.pool
        assert not p.ceil_mode and p.divisor_override is None
        k = _triple(p.kernel_size)
        s = _triple(p.stride if p.stride is not None else p.kernel_size)
        return _ext.avg_pool3d_forward(x, k, s, _triple(p.padding), bool(p.count_include_pad))
