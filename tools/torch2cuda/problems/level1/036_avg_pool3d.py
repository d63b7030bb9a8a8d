# family: pooling
"""3D average pooling, kernel 2, stride 2, on an 8x16x32x64x63 tensor (odd last dimension)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride)

    def forward(self, x):
        return self.pool(x)


BATCH = 8
CHANNELS = 16
DEPTH = 32
HEIGHT = 64
WIDTH = 63


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [2, 2]
