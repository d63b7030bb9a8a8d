# family: elementwise
"""Clamp an 8x2097159 tensor to the range [-0.5, 0.75]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return torch.clamp(x, min=self.min_val, max=self.max_val)


ROWS = 8
COLS = 2 ** 21 + 7


def get_inputs():
    x = torch.randn(ROWS, COLS)
    return [x]


def get_init_inputs():
    return [-0.5, 0.75]
