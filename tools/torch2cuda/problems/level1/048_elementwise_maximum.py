# family: elementwise
"""Elementwise maximum of two 4096x4099 tensors."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.maximum(a, b)


ROWS = 4096
COLS = 4099


def get_inputs():
    a = torch.randn(ROWS, COLS)
    b = torch.randn(ROWS, COLS)
    return [a, b]


def get_init_inputs():
    return []
