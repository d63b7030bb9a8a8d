# family: reduction
"""Sum reduction over the middle dimension (keepdim) of a 64x2049x130 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


BATCH = 64
DIM1 = 2049
DIM2 = 130


def get_inputs():
    x = torch.randn(BATCH, DIM1, DIM2)
    return [x]


def get_init_inputs():
    return [1]
