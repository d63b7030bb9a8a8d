"""Answer for level1/014_batch_norm2d: per-channel batch statistics kernel plus a fused scale/shift kernel."""
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
// Training-mode batch statistics: one block per channel, two passes (mean, then
// biased variance) over N*HW elements of an NCHW tensor.
__global__ void bn_stats_kernel(const float* __restrict__ x, float* __restrict__ mean_out,
                                float* __restrict__ var_out, int N, int C, int HW) {
    const int c = blockIdx.x;
    const long long count = (long long)N * HW;
    float s = 0.f;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        const long long n = i / HW;
        const long long p = i - n * HW;
        s += x[(n * C + c) * HW + p];
    }
    const float mean = block_reduce_sum(s) / (float)count;
    float q = 0.f;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        const long long n = i / HW;
        const long long p = i - n * HW;
        const float d = x[(n * C + c) * HW + p] - mean;
        q += d * d;
    }
    const float var = block_reduce_sum(q) / (float)count;
    if (threadIdx.x == 0) {
        mean_out[c] = mean;
        var_out[c] = var;
    }
}

// y = act(x * scale[c] + shift[c] (+ res)), act: 0 none, 1 relu, 2 relu6.
__global__ void bn_apply_kernel(const float* __restrict__ x, const float* __restrict__ scale,
                                const float* __restrict__ shift, const float* __restrict__ res,
                                float* __restrict__ y, long long total, int C, int HW, int act) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)((i / HW) % C);
        float v = fmaf(x[i], scale[c], shift[c]);
        if (res != nullptr) v += res[i];
        if (act == 1) v = fmaxf(v, 0.f);
        else if (act == 2) v = fminf(fmaxf(v, 0.f), 6.f);
        y[i] = v;
    }
}

// Returns {mean, biased var} per channel of x [N,C,H,W].
std::vector<torch::Tensor> bn_stats(torch::Tensor x) {
    CHECK_F32_CUDA(x);
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    TORCH_CHECK(x.dim() == 4, "bn_stats: expected NCHW");
    x = x.contiguous();
    const int N = (int)x.size(0), C = (int)x.size(1), HW = (int)(x.size(2) * x.size(3));
    auto mean = torch::empty({C}, x.options());
    auto var = torch::empty({C}, x.options());
    bn_stats_kernel<<<C, 512, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), mean.data_ptr<float>(),
                                                                      var.data_ptr<float>(), N, C, HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {mean, var};
}

// scale/shift are per-channel [C]; res is empty for none.
torch::Tensor bn_apply(torch::Tensor x, torch::Tensor scale, torch::Tensor shift, torch::Tensor res,
                       int64_t act) {
    CHECK_F32_CUDA(x);
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    CHECK_F32_CUDA(scale);
    CHECK_F32_CUDA(shift);
    TORCH_CHECK(x.dim() == 4, "bn_apply: expected NCHW");
    x = x.contiguous();
    scale = scale.contiguous();
    shift = shift.contiguous();
    const int C = (int)x.size(1), HW = (int)(x.size(2) * x.size(3));
    TORCH_CHECK(scale.numel() == C && shift.numel() == C, "bn_apply: bad scale/shift");
    const float* rptr = nullptr;
    if (res.defined() && res.numel() > 0) {
        CHECK_F32_CUDA(res);
        TORCH_CHECK(res.sizes() == x.sizes(), "bn_apply: residual shape");
        res = res.contiguous();
        rptr = res.data_ptr<float>();
    }
    auto y = torch::empty_like(x);
    const long long total = x.numel();
    bn_apply_kernel<<<grid_for(total, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), scale.data_ptr<float>(), shift.data_ptr<float>(), rptr, y.data_ptr<float>(), total, C,
        HW, (int)act);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = ("std::vector<torch::Tensor> bn_stats(torch::Tensor x);\n"
           "torch::Tensor bn_apply(torch::Tensor x, torch::Tensor scale, torch::Tensor shift, torch::Tensor res, "
           "int64_t act);\n")

_ext = load_inline(
    name="t2c_l1_014_batch_norm2d",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["bn_stats", "bn_apply"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _bn_scale_shift(ext, bn, x):
    """Per-channel (scale, shift) so that bn(x) == x * scale + shift."""
    use_batch_stats = bn.training or bn.running_mean is None
    if use_batch_stats:
        mean, var = ext.bn_stats(x)
        if bn.training and bn.track_running_stats and bn.running_mean is not None:
            with torch.no_grad():
                bn.num_batches_tracked += 1
                if bn.momentum is None:
                    momentum = 1.0 / float(bn.num_batches_tracked)
                else:
                    momentum = bn.momentum
                count = x.numel() // x.size(1)
                unbiased = var * (count / max(count - 1, 1))
                bn.running_mean.mul_(1.0 - momentum).add_(mean, alpha=momentum)
                bn.running_var.mul_(1.0 - momentum).add_(unbiased, alpha=momentum)
    else:
        mean, var = bn.running_mean, bn.running_var
    invstd = torch.rsqrt(var + bn.eps)
    if bn.affine:
        scale = bn.weight * invstd
        shift = bn.bias - mean * scale
    else:
        scale = invstd
        shift = -mean * invstd
    return scale.contiguous(), shift.contiguous()


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)

    def forward(self, x):
        scale, shift = _bn_scale_shift(_ext, self.bn, x)
        return _ext.bn_apply(x, scale, shift, x.new_empty(0), 0)
