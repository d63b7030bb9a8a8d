# family: activation
"""Softplus activation (beta 1, threshold 20) applied to a 16x4096x257 tensor with a wide value range."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.softplus(x)


BATCH = 16
ROWS = 4096
DIM = 257


def get_inputs():
    x = torch.randn(BATCH, ROWS, DIM) * 10.0
    return [x]


def get_init_inputs():
    return []
