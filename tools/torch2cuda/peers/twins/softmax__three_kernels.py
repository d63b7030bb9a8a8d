"""BROKEN twin of peers/answers/softmax__three_kernels.py: the row-sum reduction stops one step early (s > 1), so each row's sum misses half of its partial sums.

Changed lines are marked BROKEN.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

#define BLOCK 256

__global__ void row_max_kernel(const float* x, float* row_max, int rows, int cols) {
    __shared__ float sdata[BLOCK];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    float m = -FLT_MAX;
    for (int c = tid; c < cols; c += blockDim.x) {
        m = fmaxf(m, x[(long)row * cols + c]);
    }
    sdata[tid] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = fmaxf(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) row_max[row] = sdata[0];
}

__global__ void row_sum_exp_kernel(const float* x, const float* row_max, float* row_sum, int rows, int cols) {
    __shared__ float sdata[BLOCK];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    float m = row_max[row];
    float s_local = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        s_local += expf(x[(long)row * cols + c] - m);
    }
    sdata[tid] = s_local;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 1; s >>= 1) {  // BROKEN: stops before the last step
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) row_sum[row] = sdata[0];
}

__global__ void softmax_normalize_kernel(const float* x, const float* row_max, const float* row_sum,
                                         float* out, int rows, int cols) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long total = (long)rows * cols;
    if (idx < total) {
        int row = idx / cols;
        out[idx] = expf(x[idx] - row_max[row]) / row_sum[row];
    }
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2-D");
    x = x.contiguous();
    int rows = x.size(0);
    int cols = x.size(1);
    auto opts = x.options();
    auto row_max = torch::empty({rows}, opts);
    auto row_sum = torch::empty({rows}, opts);
    auto out = torch::empty_like(x);

    row_max_kernel<<<rows, BLOCK>>>(x.data_ptr<float>(), row_max.data_ptr<float>(), rows, cols);
    row_sum_exp_kernel<<<rows, BLOCK>>>(x.data_ptr<float>(), row_max.data_ptr<float>(), row_sum.data_ptr<float>(), rows, cols);
    long total = (long)rows * cols;
    int threads = 256;
    long blocks = (total + threads - 1) / threads;
    softmax_normalize_kernel<<<blocks, threads>>>(x.data_ptr<float>(), row_max.data_ptr<float>(),
                                                  row_sum.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    return out;
}
"""

softmax_cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

softmax_module = load_inline(
    name="peer_twin_softmax_three_kernels",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_cuda_source,
    functions=["softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax_module = softmax_module

    def forward(self, x):
        return self.softmax_module.softmax_cuda(x)
