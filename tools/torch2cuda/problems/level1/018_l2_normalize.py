# family: norm
"""L2 normalization of each row of a 4096x4095 tensor (torch.nn.functional.normalize, dim=1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)


ROWS = 4096
DIM = 4095


def get_inputs():
    x = torch.randn(ROWS, DIM)
    return [x]


def get_init_inputs():
    return []
