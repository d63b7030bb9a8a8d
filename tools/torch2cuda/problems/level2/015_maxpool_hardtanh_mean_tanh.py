# family: fusion
"""2x2 max pooling, hardtanh to [-1, 1], spatial mean (keepdim), then tanh on a 16x64x64x65 tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, pool_size, min_val, max_val):
        super().__init__()
        self.pool = nn.MaxPool2d(pool_size)
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        x = self.pool(x)
        x = F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)
        x = torch.mean(x, dim=(2, 3), keepdim=True)
        return torch.tanh(x)


BATCH = 16
CHANNELS = 64
HEIGHT = 64
WIDTH = 65


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)
    return [x]


def get_init_inputs():
    return [2, -1.0, 1.0]
