# family: norm
"""RMS normalization with a learned scale over the last dimension (2047) of a 4096x2047 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


ROWS = 4096
DIM = 2047


def get_inputs():
    x = torch.randn(ROWS, DIM)
    return [x]


def get_init_inputs():
    return [DIM]
