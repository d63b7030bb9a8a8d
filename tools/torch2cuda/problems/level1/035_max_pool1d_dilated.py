# family: pooling
"""Dilated 1D max pooling, kernel 4, stride 3, padding 1, dilation 2, over a 32x64x8191 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


BATCH = 32
CHANNELS = 64
LENGTH = 8191


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, LENGTH)
    return [x]


def get_init_inputs():
    return [4, 3, 1, 2]
