# family: reduction
"""Mean reduction over the last dimension of a 16384x1031 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


ROWS = 16384
DIM = 1031


def get_inputs():
    x = torch.randn(ROWS, DIM) + 0.25
    return [x]


def get_init_inputs():
    return []
