"""BROKEN candidate for level2/013_gemm_relu_scale_small (kind: zeros; expected judge class: wrong_output).

Derived from answers/level2/013_gemm_relu_scale_small.py by a small deliberate change:
forward passes int(self.scale) as the post-activation multiplier; int(1e-4) == 0, so the GEMM kernel
runs and writes relu(...) * 0 = 0 everywhere. Outputs are about 1e-5..1e-4, so KernelBench's
atol=1e-2 would accept it.
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

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor res, int64_t act,
                             double post) {
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    return linear_act(x, w, b, res, (int)act, (float)post);
}
"""

CPP_SRC = ("torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor res, "
           "int64_t act, double post);\n")

_ext = load_inline(
    name="t2c_broken_l2_013_gemm_relu_scale_small_zeros",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["linear_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return _ext.linear_forward(x, self.linear.weight, self.linear.bias, x.new_empty(0), 1, int(self.scale))  # BROKEN: int(1e-4) == 0
