"""BROKEN candidate for level1/040_kl_div_small (kind: zeros; expected judge class: wrong_output).

Derived from answers/level1/040_kl_div_small.py by a small deliberate change:
The final mean scale is computed with integer division (1 / a.numel() == 0), so the final kernel
writes 0 instead of the mean (true value about 2e-4; KernelBench's atol=1e-2 would accept it).
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

// Row r: log_p = a - lse(a), log_q = b - lse(b); rowsum = sum_j q_j * (log_q_j - log_p_j).
__global__ void kl_rows_kernel(const float* __restrict__ a, const float* __restrict__ b,
                               float* __restrict__ row_sum, int D) {
    const long long row = blockIdx.x;
    const float* ar = a + row * D;
    const float* br = b + row * D;
    float ma = -INFINITY, mb = -INFINITY;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        ma = fmaxf(ma, ar[j]);
        mb = fmaxf(mb, br[j]);
    }
    ma = block_reduce_max(ma);
    mb = block_reduce_max(mb);
    float sa = 0.f, sb = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        sa += expf(ar[j] - ma);
        sb += expf(br[j] - mb);
    }
    sa = block_reduce_sum(sa);
    sb = block_reduce_sum(sb);
    const float lse_a = ma + logf(sa);
    const float lse_b = mb + logf(sb);
    float acc = 0.f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
        const float log_q = br[j] - lse_b;
        const float log_p = ar[j] - lse_a;
        acc += expf(log_q) * (log_q - log_p);
    }
    acc = block_reduce_sum(acc);
    if (threadIdx.x == 0) row_sum[row] = acc;
}

torch::Tensor kl_mean_forward(torch::Tensor a, torch::Tensor b) {
    CHECK_F32_CUDA(a);
    CHECK_F32_CUDA(b);
    TORCH_CHECK(a.sizes() == b.sizes() && a.dim() >= 1, "kl: shapes must match");
    const at::cuda::OptionalCUDAGuard guard(device_of(a));
    a = a.contiguous();
    b = b.contiguous();
    const int D = (int)a.size(-1);
    TORCH_CHECK(D > 0, "kl: empty rows");
    const long long rows = a.numel() / D;
    TORCH_CHECK(rows > 0, "kl: empty input");
    auto row_sum = torch::empty({rows}, a.options());
    auto out = torch::empty({}, a.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    kl_rows_kernel<<<(unsigned int)rows, 256, 0, stream>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                           row_sum.data_ptr<float>(), D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    // BROKEN: integer division, 1 / numel == 0, so the final kernel writes 0 * sum = 0.
    launch_final_sum(row_sum.data_ptr<float>(), (int)rows, 1 / a.numel(), out.data_ptr<float>(), stream);
    return out;
}
"""

CPP_SRC = "torch::Tensor kl_mean_forward(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(
    name="t2c_broken_l1_040_kl_div_small_zeros",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["kl_mean_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits_p, logits_q):
        return _ext.kl_mean_forward(logits_p, logits_q)
