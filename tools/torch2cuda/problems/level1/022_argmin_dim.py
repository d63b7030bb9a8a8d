# family: reduction
"""Argmin over the last dimension of a 128x257x511 tensor, returning int64 indices."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmin(x, dim=self.dim)


BATCH = 128
DIM1 = 257
DIM2 = 511


def get_inputs():
    x = torch.randn(BATCH, DIM1, DIM2)
    return [x]


def get_init_inputs():
    return [2]
