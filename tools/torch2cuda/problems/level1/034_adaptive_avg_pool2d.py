# family: pooling
"""Adaptive 2D average pooling of a 32x256x29x29 tensor to a 7x7 output (uneven bins)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, output_size):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(output_size)

    def forward(self, x):
        return self.pool(x)


BATCH = 32
CHANNELS = 256
HEIGHT = 29
WIDTH = 29


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [(7, 7)]
