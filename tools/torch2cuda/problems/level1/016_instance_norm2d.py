# family: norm
"""Instance normalization (no affine) of a 16x32x64x64 tensor, per sample and channel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features)

    def forward(self, x):
        return self.inorm(x)


BATCH = 16
FEATURES = 32
HEIGHT = 64
WIDTH = 64


def get_inputs():
    x = torch.randn(BATCH, FEATURES, HEIGHT, WIDTH) * 3.0 - 1.0
    return [x]


def get_init_inputs():
    return [FEATURES]
