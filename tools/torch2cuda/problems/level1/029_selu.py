# family: activation
"""SELU activation applied to an 8192x2049 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.selu(x)


ROWS = 8192
DIM = 2049


def get_inputs():
    x = torch.randn(ROWS, DIM) * 2.0
    return [x]


def get_init_inputs():
    return []
