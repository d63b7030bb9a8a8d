# family: activation
"""Leaky ReLU with negative slope 0.02 applied to a 1000x9999 tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=self.negative_slope)


ROWS = 1000
DIM = 9999


def get_inputs():
    x = torch.randn(ROWS, DIM)
    return [x]


def get_init_inputs():
    return [0.02]
