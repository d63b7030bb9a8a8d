# family: conv
"""2D convolution, 5x5 kernel, stride 2, padding 2, 16 -> 48 channels on an odd-sized 67x71 image."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.conv(x)


BATCH = 8
IN_CHANNELS = 16
OUT_CHANNELS = 48
KERNEL_SIZE = 5
STRIDE = 2
PADDING = 2
HEIGHT = 67
WIDTH = 71


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
