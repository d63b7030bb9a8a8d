# family: reduction
"""Mean of all 16.7M elements of a zero-mean tensor; the scalar result is small in magnitude (about 1e-4)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x)


BATCH = 16
HEIGHT = 1024
WIDTH = 1024


def get_inputs():
    x = torch.randn(BATCH, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return []
