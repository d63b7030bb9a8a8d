"""BROKEN twin of peers/answers/gemm_bias_relu__cublas.py: the ReLU is applied before the bias is added.

Changed lines are marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gemm_bias_relu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>

__global__ void bias_relu_kernel(float* out, const float* bias, int rows, int cols) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < rows * cols) {
        float v = out[idx] > 0.0f ? out[idx] : 0.0f;  // BROKEN: ReLU before the bias
        out[idx] = v + bias[idx % cols];
    }
}

torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int M = x.size(0);
    const int K = x.size(1);
    const int N = weight.size(0);
    auto out = torch::empty({M, N}, x.options());

    static cublasHandle_t handle = nullptr;
    if (handle == nullptr) {
        TORCH_CHECK(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate failed");
    }
    const float alpha = 1.0f;
    const float beta = 0.0f;
    // row-major out[M,N] = x[M,K] * weight[N,K]^T: column-major out^T[N,M] = weight[N,K] * x^T[K,M]
    cublasStatus_t status = cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha,
                                        weight.data_ptr<float>(), K, x.data_ptr<float>(), K,
                                        &beta, out.data_ptr<float>(), N);
    TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasSgemm failed");

    const int threads = 256;
    const int blocks = (M * N + threads - 1) / threads;
    bias_relu_kernel<<<blocks, threads>>>(out.data_ptr<float>(), bias.data_ptr<float>(), M, N);
    return out;
}
"""

gemm_bias_relu_cpp = "torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

gemm_bias_relu = load_inline(
    name="peer_twin_gemm_bias_relu_cublas",
    cpp_sources=gemm_bias_relu_cpp,
    cuda_sources=gemm_bias_relu_source,
    functions=["linear_relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.fused = gemm_bias_relu

    def forward(self, x):
        return self.fused.linear_relu_cuda(x, self.linear.weight, self.linear.bias)
