"""Pure torch, builds nothing."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n) / k ** 0.5)

    def forward(self, x):
        return torch.relu(x @ self.w)
