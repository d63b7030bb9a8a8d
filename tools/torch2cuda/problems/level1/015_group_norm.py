# family: norm
"""Group normalization with 8 groups over 64 channels of a 16x64x48x48 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)

    def forward(self, x):
        return self.gn(x)


BATCH = 16
GROUPS = 8
CHANNELS = 64
HEIGHT = 48
WIDTH = 48


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [GROUPS, CHANNELS]
