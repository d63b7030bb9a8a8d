# family: pooling
"""2D max pooling, kernel 3, stride 2, padding 1, on an odd-sized 32x64x65x65 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


BATCH = 32
CHANNELS = 64
HEIGHT = 65
WIDTH = 65


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [3, 2, 1]
