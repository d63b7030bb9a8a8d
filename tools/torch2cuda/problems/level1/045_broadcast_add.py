# family: elementwise
"""Broadcast addition of a per-channel (64x1x1) tensor to a 16x64x128x129 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x + y


BATCH = 16
CHANNELS = 64
HEIGHT = 128
WIDTH = 129


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    y = torch.randn(CHANNELS, 1, 1)
    return [x, y]


def get_init_inputs():
    return []
