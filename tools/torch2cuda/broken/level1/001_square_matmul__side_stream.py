"""BROKEN candidate for level1/001_square_matmul (kind: side_stream; expected judge class: wrong_output or suspected_cheating).

Written for kiln after the pattern of KernelBench's adversarial unit-test kernel
(unit_tests/test_kernels/non_default_stream_kernel.py), which hides a cuBLAS GEMM on a stream of
its own: here a custom __global__ tiled SGEMM is launched on a cudaStreamNonBlocking stream that
the wrapper creates on every call and never destroys or synchronises (the leak is the pattern:
nothing ever waits for that stream). A non-blocking stream is ordered with nothing, not even the
legacy default stream, so the caller reads the output before the kernel has written it, and a
timer on the caller's stream does not see the kernel. It must never pass. Changed lines are
marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 16

// C[M,N] = A[M,K] @ B[K,N], row-major, one 16x16 output tile per block.
__global__ void tiled_sgemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                   int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(long long)row * K + ka] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = acc;
}

torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "A and B must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "matmul: shape mismatch");
    A = A.contiguous();
    B = B.contiguous();
    const int M = (int)A.size(0), K = (int)A.size(1), N = (int)B.size(1);
    auto C = torch::empty({M, N}, A.options());
    // BROKEN: a non-blocking stream of its own, created on every call, never synchronised or destroyed.
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    tiled_sgemm_kernel<<<grid, block, 0, stream>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    return C;
}
"""

CPP_SRC = "torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B);"

_ext = load_inline(
    name="t2c_broken_l1_001_square_matmul_side_stream",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["matmul_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.matmul_forward(A, B)
