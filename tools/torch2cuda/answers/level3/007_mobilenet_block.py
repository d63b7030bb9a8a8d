"""Answer for level3/007_mobilenet_block: direct depthwise and pointwise conv kernels, batch-statistics kernels, fused scale/shift+ReLU6 kernels."""
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
// Direct 2D convolution (NCHW, weight [Cout, Cin/groups, KH, KW]), one output per
// thread, grid-stride. out = act(conv + bias[co]) + post_add[co]; bias/post_add may be null.
// act: 0 none, 1 relu.
template <int ACT>
__global__ void conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                     const float* __restrict__ bias, const float* __restrict__ post_add,
                                     float* __restrict__ y,
                                     int N, int Cin, int H, int W, int Cout, int OH, int OW,
                                     int KH, int KW, int sh, int sw, int ph, int pw, int dh, int dw,
                                     int groups) {
    const long long total = (long long)N * Cout * OH * OW;
    const int cin_g = Cin / groups;
    const int cout_g = Cout / groups;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int ow = (int)(idx % OW);
        long long t = idx / OW;
        const int oh = (int)(t % OH);
        t /= OH;
        const int co = (int)(t % Cout);
        const int n = (int)(t / Cout);
        const int g = co / cout_g;
        float acc = 0.f;
        const float* wp = w + (long long)co * cin_g * KH * KW;
        const int ih0 = oh * sh - ph;
        const int iw0 = ow * sw - pw;
        for (int ci = 0; ci < cin_g; ++ci) {
            const float* xp = x + ((long long)n * Cin + (long long)g * cin_g + ci) * H * W;
            const float* wc = wp + (long long)ci * KH * KW;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = ih0 + kh * dh;
                if (ih < 0 || ih >= H) continue;
                const float* xrow = xp + (long long)ih * W;
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = iw0 + kw * dw;
                    if (iw < 0 || iw >= W) continue;
                    acc = fmaf(xrow[iw], wc[kh * KW + kw], acc);
                }
            }
        }
        if (bias != nullptr) acc += bias[co];
        if (ACT == 1) acc = acc > 0.f ? acc : 0.f;
        if (post_add != nullptr) acc += post_add[co];
        y[idx] = acc;
    }
}

// x [N,Cin,H,W], w [Cout,Cin/groups,KH,KW]; empty bias / post_add tensors mean none.
static torch::Tensor conv2d_forward_impl(torch::Tensor x, torch::Tensor w, torch::Tensor bias,
                                         torch::Tensor post_add, int sh, int sw, int ph, int pw,
                                         int dh, int dw, int groups, int act) {
    CHECK_F32_CUDA(x);
    CHECK_F32_CUDA(w);
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4, "conv2d: expected 4-D input and weight");
    x = x.contiguous();
    w = w.contiguous();
    const int N = (int)x.size(0), Cin = (int)x.size(1), H = (int)x.size(2), W = (int)x.size(3);
    const int Cout = (int)w.size(0), KH = (int)w.size(2), KW = (int)w.size(3);
    TORCH_CHECK(groups >= 1 && Cin % groups == 0 && Cout % groups == 0, "conv2d: bad groups");
    TORCH_CHECK(w.size(1) == Cin / groups, "conv2d: weight in-channels mismatch");
    const int OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1;
    const int OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "conv2d: empty output");
    const float* bptr = nullptr;
    if (bias.defined() && bias.numel() > 0) {
        CHECK_F32_CUDA(bias);
        TORCH_CHECK(bias.numel() == Cout, "conv2d: bias size");
        bias = bias.contiguous();
        bptr = bias.data_ptr<float>();
    }
    const float* pptr = nullptr;
    if (post_add.defined() && post_add.numel() > 0) {
        CHECK_F32_CUDA(post_add);
        TORCH_CHECK(post_add.numel() == Cout, "conv2d: post_add size");
        post_add = post_add.contiguous();
        pptr = post_add.data_ptr<float>();
    }
    auto y = torch::empty({N, Cout, OH, OW}, x.options());
    const long long total = (long long)N * Cout * OH * OW;
    const int threads = 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (act == 1) {
        conv2d_direct_kernel<1><<<grid_for(total, threads), threads, 0, stream>>>(
            x.data_ptr<float>(), w.data_ptr<float>(), bptr, pptr, y.data_ptr<float>(), N, Cin, H, W, Cout, OH, OW,
            KH, KW, sh, sw, ph, pw, dh, dw, groups);
    } else {
        conv2d_direct_kernel<0><<<grid_for(total, threads), threads, 0, stream>>>(
            x.data_ptr<float>(), w.data_ptr<float>(), bptr, pptr, y.data_ptr<float>(), N, Cin, H, W, Cout, OH, OW,
            KH, KW, sh, sw, ph, pw, dh, dw, groups);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
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

torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t stride, int64_t pad,
                             int64_t groups) {
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    return conv2d_forward_impl(x, w, b, torch::Tensor(), (int)stride, (int)stride, (int)pad, (int)pad, 1, 1,
                               (int)groups, 0);
}
"""

CPP_SRC = ("torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t stride, "
           "int64_t pad, int64_t groups);\n"
           "std::vector<torch::Tensor> bn_stats(torch::Tensor x);\n"
           "torch::Tensor bn_apply(torch::Tensor x, torch::Tensor scale, torch::Tensor shift, torch::Tensor res, "
           "int64_t act);\n")

_ext = load_inline(
    name="t2c_l3_007_mobilenet_block",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["conv2d_forward", "bn_stats", "bn_apply"],
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


def _conv(conv, x):
    b = conv.bias if conv.bias is not None else x.new_empty(0)
    return _ext.conv2d_forward(x, conv.weight, b, conv.stride[0], conv.padding[0], conv.groups)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.dw = nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=stride, padding=1,
                            groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pw = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        h = _conv(self.dw, x)
        scale, shift = _bn_scale_shift(_ext, self.bn1, h)
        h = _ext.bn_apply(h, scale, shift, h.new_empty(0), 2)
        h = _conv(self.pw, h)
        scale, shift = _bn_scale_shift(_ext, self.bn2, h)
        return _ext.bn_apply(h, scale, shift, h.new_empty(0), 2)
