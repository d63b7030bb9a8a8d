# family: elementwise
"""Linear interpolation torch.lerp(a, b, 0.3) of two 4097x4096 tensors."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight

    def forward(self, a, b):
        return torch.lerp(a, b, self.weight)


ROWS = 4097
COLS = 4096


def get_inputs():
    a = torch.randn(ROWS, COLS)
    b = torch.randn(ROWS, COLS)
    return [a, b]


def get_init_inputs():
    return [0.3]
