# family: conv
"""Dilated 1D convolution, kernel 5, dilation 2, padding 4, 32 -> 64 channels over an odd length of 4099."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation):
        super().__init__()
        padding = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.conv(x)


BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL_SIZE = 5
DILATION = 2
LENGTH = 4099


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, LENGTH)
    return [x]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, DILATION]
