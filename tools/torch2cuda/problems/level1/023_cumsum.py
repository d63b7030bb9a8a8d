# family: reduction
"""Inclusive prefix sum (torch.cumsum) along dimension 1 of a 256x8191 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


ROWS = 256
LENGTH = 8191


def get_inputs():
    x = torch.randn(ROWS, LENGTH)
    return [x]


def get_init_inputs():
    return [1]
