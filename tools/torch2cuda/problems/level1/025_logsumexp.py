# family: reduction
"""Log-sum-exp reduction over dimension 1 of a 4096x4093 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.logsumexp(x, dim=self.dim)


ROWS = 4096
DIM = 4093


def get_inputs():
    x = torch.randn(ROWS, DIM) * 4.0
    return [x]


def get_init_inputs():
    return [1]
