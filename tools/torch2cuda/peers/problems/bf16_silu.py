# family: activation
"""SiLU (x * sigmoid(x)) of a 2048x3001 bfloat16 tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


ROWS = 2048
COLS = 3001


def get_inputs():
    return [(torch.randn(ROWS, COLS) * 3.0).to(torch.bfloat16)]


def get_init_inputs():
    return []
