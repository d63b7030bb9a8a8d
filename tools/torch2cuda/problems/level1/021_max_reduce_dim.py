# family: reduction
"""Max reduction over dimension 1 of a 128x513x257 tensor (values only)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.max(x, dim=self.dim)[0]


BATCH = 128
DIM1 = 513
DIM2 = 257


def get_inputs():
    x = torch.randn(BATCH, DIM1, DIM2)
    return [x]


def get_init_inputs():
    return [1]
