# family: elementwise
"""Half-precision scale and per-column bias: y = x * scale + bias, x of 1023x4095 float16 (an odd
element count), bias of 4095 float16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, bias):
        return x * self.scale + bias


ROWS = 1023
COLS = 4095


def get_inputs():
    x = torch.randn(ROWS, COLS).half()
    bias = torch.randn(COLS).half()
    return [x, bias]


def get_init_inputs():
    return [0.5]
