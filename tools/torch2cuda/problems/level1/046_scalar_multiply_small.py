# family: elementwise
"""Multiply a 4099x4097 tensor by the scalar 3e-5; outputs are small in magnitude (about 1e-5 to 1e-4)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, A):
        return A * self.scale


ROWS = 4099
COLS = 4097


def get_inputs():
    A = torch.randn(ROWS, COLS)
    return [A]


def get_init_inputs():
    return [3e-5]
