"""Answer for level3/004_multihead_self_attention: SGEMM projections with fused bias, batched SGEMM attention with a row-softmax kernel."""
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

__global__ void softmax_rows_kernel(const float* __restrict__ s, float* __restrict__ p, int L) {
    const long long row = blockIdx.x;
    const float* sr = s + row * L;
    float* pr = p + row * L;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < L; j += blockDim.x) m = fmaxf(m, sr[j]);
    m = block_reduce_max(m);
    float sum = 0.f;
    for (int j = threadIdx.x; j < L; j += blockDim.x) sum += expf(sr[j] - m);
    const float inv = 1.f / block_reduce_sum(sum);
    for (int j = threadIdx.x; j < L; j += blockDim.x) pr[j] = expf(sr[j] - m) * inv;
}

// q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv] -> softmax(scale * q k^T) v, shape [..., Tq, Dv]
torch::Tensor attention_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale) {
    CHECK_F32_CUDA(q);
    CHECK_F32_CUDA(k);
    CHECK_F32_CUDA(v);
    TORCH_CHECK(q.dim() >= 2 && q.dim() == k.dim() && q.dim() == v.dim(), "attention: rank mismatch");
    const at::cuda::OptionalCUDAGuard guard(device_of(q));
    q = q.contiguous();
    k = k.contiguous();
    v = v.contiguous();
    const int Tq = (int)q.size(-2), D = (int)q.size(-1), Tk = (int)k.size(-2), Dv = (int)v.size(-1);
    TORCH_CHECK(k.size(-1) == D && v.size(-2) == Tk, "attention: inner sizes mismatch");
    const long long batch = (Tq > 0 && D > 0) ? q.numel() / ((long long)Tq * D) : 0;
    TORCH_CHECK(k.numel() == batch * Tk * D && v.numel() == batch * Tk * Dv, "attention: batch sizes mismatch");
    auto out_sizes = q.sizes().vec();
    out_sizes.back() = Dv;
    auto out = torch::empty(out_sizes, q.options());
    if (batch == 0 || Tq == 0 || Dv == 0) return out;
    TORCH_CHECK(Tk > 0, "attention: empty key sequence");
    auto S = torch::empty({batch, Tq, Tk}, q.options());
    auto P = torch::empty({batch, Tq, Tk}, q.options());
    launch_sgemm(0, q.data_ptr<float>(), k.data_ptr<float>(), S.data_ptr<float>(), nullptr, nullptr,
                 (int)batch, Tq, Tk, D,
                 (long long)Tq * D, D, 1,
                 (long long)Tk * D, 1, D,
                 (long long)Tq * Tk, Tk, 1,
                 0, 0, 0, (float)scale, 1.f);
    softmax_rows_kernel<<<(unsigned int)(batch * Tq), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        S.data_ptr<float>(), P.data_ptr<float>(), Tk);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    launch_sgemm(0, P.data_ptr<float>(), v.data_ptr<float>(), out.data_ptr<float>(), nullptr, nullptr,
                 (int)batch, Tq, Dv, Tk,
                 (long long)Tq * Tk, Tk, 1,
                 (long long)Tk * Dv, Dv, 1,
                 (long long)Tq * Dv, Dv, 1,
                 0, 0, 0, 1.f, 1.f);
    return out;
}

torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    return linear_act(x, w, b, torch::Tensor(), 0, 1.f);
}
"""

CPP_SRC = ("torch::Tensor attention_forward(torch::Tensor q, torch::Tensor k, torch::Tensor v, double scale);\n"
           "torch::Tensor linear_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b);\n")

_ext = load_inline(
    name="t2c_l3_004_multihead_self_attention",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["attention_forward", "linear_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        B, T, E = x.shape
        qkv = _ext.linear_forward(x.reshape(B * T, E), self.qkv.weight, self.qkv.bias)
        qkv = qkv.view(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        y = _ext.attention_forward(qkv[0], qkv[1], qkv[2], self.scale)  # [B, H, T, D]
        y = y.transpose(1, 2).reshape(B * T, E)
        return _ext.linear_forward(y, self.proj.weight, self.proj.bias).view(B, T, E)
