"""C++ compile error candidate."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SRC = r"""
#include <torch/extension.h>
torch::Tensor broken(torch::Tensor x) {
    return x + undeclared_identifier_kiln;
}
"""

_ext = load_inline(name="judge_test_broken", cpp_sources=CPP_SRC, functions=["broken"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, k, n):
        super().__init__()

    def forward(self, x):
        return _ext.broken(x)
