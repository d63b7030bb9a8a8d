# family: fusion
"""Per-channel learned scale and shift, then clamp to [-1, 1], on a 16x64x128x128 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels, 1, 1))
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x):
        return torch.clamp(x * self.weight + self.bias, min=-1.0, max=1.0)


BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 128


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [CHANNELS]
