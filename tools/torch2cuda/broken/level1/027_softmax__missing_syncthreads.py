"""BROKEN candidate for level1/027_softmax (kind: missing_syncthreads; expected judge class: wrong_output or nan).

Derived from answers/level1/027_softmax.py by a small deliberate change:
block_reduce_sum lost both barriers between its reduction steps (after the per-warp partial stores
and before the broadcast read of the total). Rows of 4093 on 512 threads = 16 warps. Most threads
use whatever sh_red_sum[0] holds at that moment (warp 0's own partial or a stale value from an
earlier block), so the row's normaliser is wrong by a large factor. If the stale shared memory holds
0 or garbage the outputs can even become inf/NaN, so 'nan' is also accepted.
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
__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_reduce_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum over the whole block; blockDim.x must be a multiple of 32 (<= 1024).
// Every thread of the block receives the result.
__device__ float block_reduce_sum(float v) {
    __shared__ float sh_red_sum[32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nw = blockDim.x >> 5;
    v = warp_reduce_sum(v);
    if (lane == 0) sh_red_sum[wid] = v;
    // BROKEN: __syncthreads() removed; warp 0 may read partials other warps have not written yet.
    if (wid == 0) {
        float r = (lane < nw) ? sh_red_sum[lane] : 0.f;
        r = warp_reduce_sum(r);
        if (lane == 0) sh_red_sum[0] = r;
    }
    // BROKEN: __syncthreads() removed; warps 1.. read sh_red_sum[0] before warp 0 stores the total.
    const float r = sh_red_sum[0];
    __syncthreads();
    return r;
}

// Max over the whole block; same contract as block_reduce_sum.
__device__ float block_reduce_max(float v) {
    __shared__ float sh_red_max[32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nw = blockDim.x >> 5;
    v = warp_reduce_max(v);
    if (lane == 0) sh_red_max[wid] = v;
    __syncthreads();
    if (wid == 0) {
        float r = (lane < nw) ? sh_red_max[lane] : -INFINITY;
        r = warp_reduce_max(r);
        if (lane == 0) sh_red_max[0] = r;
    }
    __syncthreads();
    const float r = sh_red_max[0];
    __syncthreads();
    return r;
}

// One block per row: row max, sum of exp(x - max), then the normalized write.
__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int D) {
    const long long row = blockIdx.x;
    const float* xr = x + row * D;
    float* yr = y + row * D;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < D; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_reduce_max(m);
    float s = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) s += expf(xr[j] - m);
    s = block_reduce_sum(s);
    const float inv = 1.f / s;
    for (int j = threadIdx.x; j < D; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
}

torch::Tensor softmax_forward(torch::Tensor x, int64_t dim) {
    CHECK_F32_CUDA(x);
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "softmax: bad dim");
    auto xm = x.movedim(dim, nd - 1).contiguous();
    const int D = (int)xm.size(-1);
    auto y = torch::empty_like(xm);
    const long long rows = D > 0 ? xm.numel() / D : 0;
    if (rows > 0) {
        softmax_rows_kernel<<<(unsigned int)rows, 512, 0, at::cuda::getCurrentCUDAStream()>>>(
            xm.data_ptr<float>(), y.data_ptr<float>(), D);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y.movedim(nd - 1, dim).contiguous();
}
"""

CPP_SRC = "torch::Tensor softmax_forward(torch::Tensor x, int64_t dim);"

_ext = load_inline(
    name="t2c_broken_l1_027_softmax_missing_syncthreads",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["softmax_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_forward(x, 1)
