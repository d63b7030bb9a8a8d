# family: fusion
"""3x3 convolution (32 -> 64, no padding), ReLU, then addition of a learned per-channel bias."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        return x + self.bias


BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL_SIZE = 3
HEIGHT = 64
WIDTH = 64


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, (OUT_CHANNELS, 1, 1)]
