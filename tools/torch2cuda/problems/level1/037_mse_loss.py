# family: loss
"""Mean squared error loss between two 4096x2049 tensors (mean reduction)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.mse_loss(predictions, targets)


ROWS = 4096
DIM = 2049


def get_inputs():
    predictions = torch.randn(ROWS, DIM)
    targets = torch.randn(ROWS, DIM)
    return [predictions, targets]


def get_init_inputs():
    return []
