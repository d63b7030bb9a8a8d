# family: conv
"""Depthwise 2D convolution (groups == channels), 3x3 kernel, padding 1, 64 channels on 16x64x64x64 input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)

    def forward(self, x):
        return self.conv(x)


BATCH = 16
CHANNELS = 64
KERNEL_SIZE = 3
HEIGHT = 64
WIDTH = 64


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE]
