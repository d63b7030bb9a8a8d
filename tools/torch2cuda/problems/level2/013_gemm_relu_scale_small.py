# family: fusion
"""Linear layer (768 -> 1000), ReLU, then scaling by 1e-4; outputs are small in magnitude (about 1e-5 to 1e-4)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.scale


BATCH = 2048
IN_FEATURES = 768
OUT_FEATURES = 1000


def get_inputs():
    x = torch.randn(BATCH, IN_FEATURES)
    return [x]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, 1e-4]
