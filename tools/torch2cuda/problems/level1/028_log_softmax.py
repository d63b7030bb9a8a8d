# family: activation
"""Log-softmax over dimension 1 of a 2048x8191 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


ROWS = 2048
DIM = 8191


def get_inputs():
    x = torch.randn(ROWS, DIM) * 3.0
    return [x]


def get_init_inputs():
    return []
