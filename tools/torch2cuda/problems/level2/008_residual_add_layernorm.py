# family: fusion
"""Residual addition x + y followed by LayerNorm over 2049 features for 4096 rows."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x, y):
        return self.ln(x + y)


ROWS = 4096
FEATURES = 2049


def get_inputs():
    x = torch.randn(ROWS, FEATURES)
    y = torch.randn(ROWS, FEATURES) * 0.5
    return [x, y]


def get_init_inputs():
    return [FEATURES]
