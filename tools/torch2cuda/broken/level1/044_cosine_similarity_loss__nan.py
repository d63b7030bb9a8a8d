"""BROKEN candidate for level1/044_cosine_similarity_loss (kind: nan; expected judge class: nan).

Derived from answers/level1/044_cosine_similarity_loss.py by a small deliberate change:
The cosine denominator was mistyped as sqrtf(na - nb) (and the eps clamps dropped): since b = 0.5 a
+ noise, |b|^2 > |a|^2 on essentially every row (by ~256 +- 65), so the square root of a negative
number gives NaN row losses and a NaN mean. The reference has no NaN.
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
    __syncthreads();
    if (wid == 0) {
        float r = (lane < nw) ? sh_red_sum[lane] : 0.f;
        r = warp_reduce_sum(r);
        if (lane == 0) sh_red_sum[0] = r;
    }
    __syncthreads();
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
__global__ void final_sum_kernel(const float* __restrict__ partials, int n, double scale,
                                 float* __restrict__ out) {
    __shared__ double sh[256];
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += (double)partials[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = (float)(sh[0] * scale);
}

static void launch_final_sum(const float* partials, int n, double scale, float* out, cudaStream_t stream) {
    final_sum_kernel<<<1, 256, 0, stream>>>(partials, n, scale, out);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

__global__ void cosine_loss_rows_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ row_loss, int D, float eps) {
    const long long row = blockIdx.x;
    const float* ar = a + row * D;
    const float* br = b + row * D;
    float dot = 0.f, na = 0.f, nb = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        const float x = ar[j], y = br[j];
        dot = fmaf(x, y, dot);
        na = fmaf(x, x, na);
        nb = fmaf(y, y, nb);
    }
    dot = block_reduce_sum(dot);
    na = block_reduce_sum(na);
    nb = block_reduce_sum(nb);
    if (threadIdx.x == 0) {
        const float denom = sqrtf(na - nb);  // BROKEN: typo for sqrt(na) * sqrt(nb); na < nb, so NaN
        row_loss[row] = 1.f - dot / denom;
    }
}

torch::Tensor cosine_loss_forward(torch::Tensor a, torch::Tensor b) {
    CHECK_F32_CUDA(a);
    CHECK_F32_CUDA(b);
    TORCH_CHECK(a.dim() == 2 && a.sizes() == b.sizes(), "cosine loss: expected equal [N,D]");
    const at::cuda::OptionalCUDAGuard guard(device_of(a));
    a = a.contiguous();
    b = b.contiguous();
    const int N = (int)a.size(0), D = (int)a.size(1);
    TORCH_CHECK(N > 0, "cosine loss: empty batch");
    auto row_loss = torch::empty({N}, a.options());
    auto out = torch::empty({}, a.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    cosine_loss_rows_kernel<<<N, 256, 0, stream>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                   row_loss.data_ptr<float>(), D, 1e-8f);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    launch_final_sum(row_loss.data_ptr<float>(), N, 1.0 / (double)N, out.data_ptr<float>(), stream);
    return out;
}
"""

CPP_SRC = "torch::Tensor cosine_loss_forward(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(
    name="t2c_broken_l1_044_cosine_similarity_loss_nan",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["cosine_loss_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.cosine_loss_forward(a, b)
