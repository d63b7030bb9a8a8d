# family: fusion
"""3x3 convolution (32 -> 64, padding 1), GroupNorm with 8 groups, then Mish activation."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = self.gn(x)
        return F.mish(x)


BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL_SIZE = 3
GROUPS = 8
HEIGHT = 48
WIDTH = 48


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, GROUPS]
