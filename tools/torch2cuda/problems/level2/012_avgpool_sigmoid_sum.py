# family: fusion
"""2x2 average pooling, sigmoid, then sum over channels and space, giving one value per sample."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, pool_size):
        super().__init__()
        self.pool = nn.AvgPool2d(pool_size)

    def forward(self, x):
        x = self.pool(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=[1, 2, 3])


BATCH = 32
CHANNELS = 64
HEIGHT = 64
WIDTH = 64


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [2]
