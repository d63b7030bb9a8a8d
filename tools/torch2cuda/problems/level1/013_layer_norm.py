# family: norm
"""Layer normalization over the last dimension (3073 features) of a 2048x3073 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return self.ln(x)


ROWS = 2048
FEATURES = 3073


def get_inputs():
    x = torch.randn(ROWS, FEATURES)
    return [x]


def get_init_inputs():
    return [FEATURES]
