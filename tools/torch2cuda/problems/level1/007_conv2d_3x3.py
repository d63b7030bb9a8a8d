# family: conv
"""2D convolution, 3x3 kernel, stride 1, same padding, 32 -> 64 channels on 8x32x64x64 input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL_SIZE = 3
HEIGHT = 64
WIDTH = 64


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
