# family: pooling
"""2D average pooling, kernel 3, stride 2, padding 1 (padding counted), on a 32x32x128x127 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


BATCH = 32
CHANNELS = 32
HEIGHT = 128
WIDTH = 127


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [3, 2, 1]
