"""Answer for level3/002_small_cnn: direct conv kernels with fused bias+ReLU, a 2x2 max-pool kernel, and SGEMM linears with fused epilogues."""
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
// Tiled SGEMM over arbitrary strides (so transposed operands need no copy):
//   C[b,m,n] = post * act(alpha * sum_k A[b,m,k] * B[b,k,n] + bias[n] + R[b,m,n])
// bias and R may be null. 64x64 output tile per 256-thread block, 4x4 per thread.
#define GEMM_BM 64
#define GEMM_BN 64
#define GEMM_BK 16

template <int ACT>
__device__ __forceinline__ float gemm_act(float v) {
    if (ACT == 1) return v > 0.f ? v : 0.f;                                   // relu
    if (ACT == 2) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));   // gelu (erf)
    if (ACT == 3) return 1.f / (1.f + expf(-v));                              // sigmoid
    return v;
}

template <int ACT>
__global__ void __launch_bounds__(256) sgemm_strided_kernel(
    const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
    const float* __restrict__ bias, const float* __restrict__ R,
    int M, int N, int K,
    long long sAb, long long sAm, long long sAk,
    long long sBb, long long sBk, long long sBn,
    long long sCb, long long sCm, long long sCn,
    long long sRb, long long sRm, long long sRn,
    float alpha, float post) {
    __shared__ float As[GEMM_BK][GEMM_BM + 1];
    __shared__ float Bs[GEMM_BK][GEMM_BN + 1];
    const int tid = threadIdx.x;
    const int tx = tid & 15;
    const int ty = tid >> 4;
    const long long bz = blockIdx.z;
    A += bz * sAb;
    B += bz * sBb;
    C += bz * sCb;
    if (R != nullptr) R += bz * sRb;
    const int m0 = blockIdx.y * GEMM_BM;
    const int n0 = blockIdx.x * GEMM_BN;
    const bool a_kfast = (sAk == 1);
    const bool b_nfast = (sBn == 1);

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < K; k0 += GEMM_BK) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int e = tid + r * 256;  // 0 .. 1023 covers a 64x16 tile
            int mm, kk;
            if (a_kfast) { mm = e >> 4; kk = e & 15; } else { mm = e & 63; kk = e >> 6; }
            const int gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < M && gk < K) ? A[(long long)gm * sAm + (long long)gk * sAk] : 0.f;
            int nn, kb;
            if (b_nfast) { nn = e & 63; kb = e >> 6; } else { nn = e >> 4; kb = e & 15; }
            const int gn = n0 + nn, gkb = k0 + kb;
            Bs[kb][nn] = (gn < N && gkb < K) ? B[(long long)gkb * sBk + (long long)gn * sBn] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; ++kk) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int gm = m0 + ty + 16 * i;
        if (gm >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int gn = n0 + tx + 16 * j;
            if (gn >= N) continue;
            float v = alpha * acc[i][j];
            if (bias != nullptr) v += bias[gn];
            if (R != nullptr) v += R[(long long)gm * sRm + (long long)gn * sRn];
            C[(long long)gm * sCm + (long long)gn * sCn] = post * gemm_act<ACT>(v);
        }
    }
}

// act: 0 none, 1 relu, 2 gelu, 3 sigmoid. Launches on the current stream.
static void launch_sgemm(int act, const float* A, const float* B, float* C,
                         const float* bias, const float* R,
                         int batch, int M, int N, int K,
                         long long sAb, long long sAm, long long sAk,
                         long long sBb, long long sBk, long long sBn,
                         long long sCb, long long sCm, long long sCn,
                         long long sRb, long long sRm, long long sRn,
                         float alpha, float post) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    TORCH_CHECK(batch <= 65535, "sgemm: batch too large");
    dim3 block(256);
    dim3 grid((unsigned int)((N + GEMM_BN - 1) / GEMM_BN), (unsigned int)((M + GEMM_BM - 1) / GEMM_BM),
              (unsigned int)batch);
    TORCH_CHECK(grid.y <= 65535, "sgemm: M too large");
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    switch (act) {
        case 1:
            sgemm_strided_kernel<1><<<grid, block, 0, stream>>>(A, B, C, bias, R, M, N, K, sAb, sAm, sAk, sBb, sBk,
                                                                sBn, sCb, sCm, sCn, sRb, sRm, sRn, alpha, post);
            break;
        case 2:
            sgemm_strided_kernel<2><<<grid, block, 0, stream>>>(A, B, C, bias, R, M, N, K, sAb, sAm, sAk, sBb, sBk,
                                                                sBn, sCb, sCm, sCn, sRb, sRm, sRn, alpha, post);
            break;
        case 3:
            sgemm_strided_kernel<3><<<grid, block, 0, stream>>>(A, B, C, bias, R, M, N, K, sAb, sAm, sAk, sBb, sBk,
                                                                sBn, sCb, sCm, sCn, sRb, sRm, sRn, alpha, post);
            break;
        default:
            sgemm_strided_kernel<0><<<grid, block, 0, stream>>>(A, B, C, bias, R, M, N, K, sAb, sAm, sAk, sBb, sBk,
                                                                sBn, sCb, sCm, sCn, sRb, sRm, sRn, alpha, post);
            break;
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// y[M,N] = post * act(x[M,K] @ w[N,K]^T + b[N] (+ res[M,N])), all contiguous.
// An empty b (numel 0) or empty res means "none".
static torch::Tensor linear_act(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor res,
                                int act, float post) {
    CHECK_F32_CUDA(x);
    CHECK_F32_CUDA(w);
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "linear_act: bad shapes");
    x = x.contiguous();
    w = w.contiguous();
    const int M = (int)x.size(0), K = (int)x.size(1), N = (int)w.size(0);
    const float* bptr = nullptr;
    if (b.defined() && b.numel() > 0) {
        CHECK_F32_CUDA(b);
        TORCH_CHECK(b.numel() == N, "linear_act: bias size");
        b = b.contiguous();
        bptr = b.data_ptr<float>();
    }
    const float* rptr = nullptr;
    if (res.defined() && res.numel() > 0) {
        CHECK_F32_CUDA(res);
        TORCH_CHECK(res.numel() == (long long)M * N, "linear_act: residual size");
        res = res.contiguous();
        rptr = res.data_ptr<float>();
    }
    auto y = torch::empty({M, N}, x.options());
    launch_sgemm(act, x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), bptr, rptr,
                 1, M, N, K,
                 0, K, 1,      // A = x: [M,K] row-major
                 0, 1, K,      // B[k][n] = w[n][k]
                 0, N, 1,      // C
                 0, N, 1,      // R
                 1.f, post);
    return y;
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

// k x k max pool with stride k, no padding (floor mode).
__global__ void max_pool_kernel(const float* __restrict__ x, float* __restrict__ y, long long total, int H, int W,
                                int OH, int OW, int k) {
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int ow = (int)(idx % OW);
        const int oh = (int)((idx / OW) % OH);
        const long long nc = idx / ((long long)OW * OH);
        const float* xp = x + nc * H * W + (long long)(oh * k) * W + ow * k;
        float m = -INFINITY;
        for (int i = 0; i < k; ++i)
            for (int j = 0; j < k; ++j) m = fmaxf(m, xp[(long long)i * W + j]);
        y[idx] = m;
    }
}

// max_pool(relu(conv(x) + b), k)
torch::Tensor conv_relu_pool_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t pad, int64_t k) {
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    auto v = conv2d_forward_impl(x, w, b, torch::Tensor(), 1, 1, (int)pad, (int)pad, 1, 1, 1, 1);
    const int N = (int)v.size(0), C = (int)v.size(1), H = (int)v.size(2), W = (int)v.size(3);
    const int OH = H / (int)k, OW = W / (int)k;
    TORCH_CHECK(OH > 0 && OW > 0, "max_pool: empty output");
    auto y = torch::empty({N, C, OH, OW}, v.options());
    const long long total = y.numel();
    max_pool_kernel<<<grid_for(total, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        v.data_ptr<float>(), y.data_ptr<float>(), total, H, W, OH, OW, (int)k);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t act) {
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    return linear_act(x, w, b, torch::Tensor(), (int)act, 1.f);
}
"""

CPP_SRC = ("torch::Tensor conv_relu_pool_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t pad, "
           "int64_t k);\n"
           "torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t act);\n")

_ext = load_inline(
    name="t2c_l3_002_small_cnn",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["conv_relu_pool_forward", "linear_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, num_classes)

    def forward(self, x):
        x = _ext.conv_relu_pool_forward(x, self.conv1.weight, self.conv1.bias, 1, 2)
        x = _ext.conv_relu_pool_forward(x, self.conv2.weight, self.conv2.bias, 1, 2)
        x = x.reshape(x.size(0), -1)
        x = _ext.linear_forward(x, self.fc1.weight, self.fc1.bias, 1)
        return _ext.linear_forward(x, self.fc2.weight, self.fc2.bias, 0)
