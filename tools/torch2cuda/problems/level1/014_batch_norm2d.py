# family: norm
"""2D batch normalization (training mode, batch statistics) over 64 channels of a 16x64x56x56 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)

    def forward(self, x):
        return self.bn(x)


BATCH = 16
FEATURES = 64
HEIGHT = 56
WIDTH = 56


def get_inputs():
    x = torch.randn(BATCH, FEATURES, HEIGHT, WIDTH) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [FEATURES]
