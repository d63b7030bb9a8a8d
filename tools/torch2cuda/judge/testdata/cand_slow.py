"""Correct but slow CPU candidate for ref_relu_matmul: the same naive kernel, run 40 times
per call (the last result returned). Correct is a pass, however slow."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SRC = r"""
#include <torch/extension.h>

// y = relu(x @ w) * scale, naive loops, float32, contiguous copies.
torch::Tensor relu_matmul(torch::Tensor x, torch::Tensor w, double scale) {
    TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(0), "relu_matmul: bad shapes");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(1);
    auto y = torch::empty({M, N}, xc.options());
    const float* A = xc.data_ptr<float>();
    const float* B = wc.data_ptr<float>();
    float* C = y.data_ptr<float>();
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            float acc = 0.f;
            for (int64_t k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];
            C[m * N + n] = (acc > 0.f ? acc : 0.f) * (float)scale;
        }
    return y;
}

torch::Tensor zeros_out(torch::Tensor x, torch::Tensor w) {
    return torch::zeros({x.size(0), w.size(1)}, x.options());
}

torch::Tensor touch(torch::Tensor x) { return x; }
"""

_ext = load_inline(
    name="judge_test_common",
    cpp_sources=CPP_SRC,
    functions=["relu_matmul", "zeros_out", "touch"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n) / k ** 0.5)

    def forward(self, x):
        y = None
        for _ in range(40):
            y = _ext.relu_matmul(x, self.w, 1.0)
        return y
