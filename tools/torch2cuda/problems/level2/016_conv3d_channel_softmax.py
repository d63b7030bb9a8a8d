# family: fusion
"""3D convolution (8 -> 16 channels, 3x3x3, no padding) followed by softmax over the channel dimension."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.softmax(self.conv(x), dim=1)


BATCH = 8
IN_CHANNELS = 8
OUT_CHANNELS = 16
KERNEL_SIZE = 3
DEPTH = 16
HEIGHT = 32
WIDTH = 32


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
