"""Test reference: y = relu(x @ w), small sizes (outputs of order 1)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n) / k ** 0.5)

    def forward(self, x):
        return torch.relu(x @ self.w)


M, K, N = 32, 64, 48


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
