# family: fusion
"""3x3 convolution (16 -> 32, padding 1), tanh, scaling, then 2x2 max pooling on odd 63x63 images."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale, pool_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.scale = scale
        self.pool = nn.MaxPool2d(pool_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.tanh(x) * self.scale
        return self.pool(x)


BATCH = 16
IN_CHANNELS = 16
OUT_CHANNELS = 32
KERNEL_SIZE = 3
HEIGHT = 63
WIDTH = 63


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, 1.5, 2]
