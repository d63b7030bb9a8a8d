# family: fusion
"""Transposed 3x3 convolution (stride 2, 32 -> 16 channels), addition of a second input, then HardSwish."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding, output_padding=output_padding)

    def forward(self, x, add_input):
        return F.hardswish(self.conv_t(x) + add_input)


BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 16
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
OUTPUT_PADDING = 1
HEIGHT = 32
WIDTH = 32


def get_inputs():
    x = torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)
    add_input = torch.randn(BATCH, OUT_CHANNELS, HEIGHT * STRIDE, WIDTH * STRIDE)
    return [x, add_input]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING, OUTPUT_PADDING]
