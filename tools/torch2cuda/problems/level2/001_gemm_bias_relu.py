# family: fusion
"""Linear layer (1024 -> 2047) followed by ReLU on a batch of 1024 rows."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


BATCH = 1024
IN_FEATURES = 1024
OUT_FEATURES = 2047


def get_inputs():
    x = torch.randn(BATCH, IN_FEATURES)
    return [x]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
