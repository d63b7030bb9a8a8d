# family: fusion
"""Linear layer (1024 -> 1536), LayerNorm over the 1536 features, then exact GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ln = nn.LayerNorm(out_features)

    def forward(self, x):
        return F.gelu(self.ln(self.linear(x)))


BATCH = 2048
IN_FEATURES = 1024
OUT_FEATURES = 1536


def get_inputs():
    x = torch.randn(BATCH, IN_FEATURES)
    return [x]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
