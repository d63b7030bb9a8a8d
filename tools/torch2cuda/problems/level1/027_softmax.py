# family: activation
"""Softmax over dimension 1 of a 4096x4093 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


ROWS = 4096
DIM = 4093


def get_inputs():
    x = torch.randn(ROWS, DIM) * 3.0
    return [x]


def get_init_inputs():
    return []
