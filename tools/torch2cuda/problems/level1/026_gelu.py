# family: activation
"""GELU activation (exact erf form) applied to a 4096x4096 tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


ROWS = 4096
DIM = 4096


def get_inputs():
    x = torch.randn(ROWS, DIM) * 2.0
    return [x]


def get_init_inputs():
    return []
