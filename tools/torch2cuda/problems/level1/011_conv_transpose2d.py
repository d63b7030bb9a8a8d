# family: conv
"""Transposed 2D convolution, 4x4 kernel, stride 2, padding 1, 64 -> 32 channels, upsampling 32x32 to 64x64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.conv_t(x)


BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 32
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1
HEIGHT = 32
WIDTH = 32


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
