"""Answer for level3/006_lstm_last_hidden: one SGEMM for all input projections, then per step an SGEMM (h W_hh^T + pre) and a fused LSTM-cell kernel."""
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

__device__ __forceinline__ float sigmoidf_(float v) { return 1.f / (1.f + expf(-v)); }

// gates [B, 4H] in PyTorch order (i, f, g, o); updates c in place and writes h.
__global__ void lstm_cell_kernel(const float* __restrict__ gates, float* __restrict__ c, float* __restrict__ h,
                                 int B, int H) {
    const long long total = (long long)B * H;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long b = idx / H;
        const int j = (int)(idx % H);
        const float* g = gates + b * 4 * H;
        const float ig = sigmoidf_(g[j]);
        const float fg = sigmoidf_(g[H + j]);
        const float gg = tanhf(g[2 * H + j]);
        const float og = sigmoidf_(g[3 * H + j]);
        const float cn = fg * c[idx] + ig * gg;
        c[idx] = cn;
        h[idx] = og * tanhf(cn);
    }
}

// x [B, T, I] (batch_first), zero initial state; returns the last hidden state [B, H].
torch::Tensor lstm_last_hidden_forward(torch::Tensor x, torch::Tensor w_ih, torch::Tensor w_hh, torch::Tensor b_ih,
                                       torch::Tensor b_hh) {
    CHECK_F32_CUDA(x);
    CHECK_F32_CUDA(w_ih);
    CHECK_F32_CUDA(w_hh);
    CHECK_F32_CUDA(b_ih);
    CHECK_F32_CUDA(b_hh);
    TORCH_CHECK(x.dim() == 3, "lstm: expected [B, T, I]");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    x = x.contiguous();
    w_hh = w_hh.contiguous();
    const int B = (int)x.size(0), T = (int)x.size(1), I = (int)x.size(2);
    const int H = (int)w_hh.size(1);
    TORCH_CHECK(w_ih.size(0) == 4 * H && w_ih.size(1) == I && w_hh.size(0) == 4 * H, "lstm: weight shapes");
    auto h = torch::zeros({B, H}, x.options());
    if (T == 0 || B == 0) return h;
    auto c = torch::zeros({B, H}, x.options());
    auto bias = (b_ih + b_hh).contiguous();
    // pre[b*T + t, :] = x[b, t, :] @ w_ih^T + b_ih + b_hh
    auto pre = linear_act(x.view({(long long)B * T, I}), w_ih, bias, torch::Tensor(), 0, 1.f);
    auto gates = torch::empty({B, 4 * H}, x.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const long long G = 4LL * H;
    for (int t = 0; t < T; ++t) {
        // gates = h @ w_hh^T + pre[:, t, :]
        launch_sgemm(0, h.data_ptr<float>(), w_hh.data_ptr<float>(), gates.data_ptr<float>(), nullptr,
                     pre.data_ptr<float>() + (long long)t * G,
                     1, B, 4 * H, H,
                     0, H, 1,
                     0, 1, H,
                     0, G, 1,
                     0, (long long)T * G, 1,
                     1.f, 1.f);
        lstm_cell_kernel<<<grid_for((long long)B * H, 256), 256, 0, stream>>>(gates.data_ptr<float>(),
                                                                               c.data_ptr<float>(),
                                                                               h.data_ptr<float>(), B, H);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return h;
}
"""

CPP_SRC = ("torch::Tensor lstm_last_hidden_forward(torch::Tensor x, torch::Tensor w_ih, torch::Tensor w_hh, "
           "torch::Tensor b_ih, torch::Tensor b_hh);")

_ext = load_inline(
    name="t2c_l3_006_lstm_last_hidden",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["lstm_last_hidden_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)

    def forward(self, x):
        m = self.lstm
        assert m.num_layers == 1 and not m.bidirectional and m.bias and m.batch_first
        assert getattr(m, "proj_size", 0) == 0
        return _ext.lstm_last_hidden_forward(x, m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0)
