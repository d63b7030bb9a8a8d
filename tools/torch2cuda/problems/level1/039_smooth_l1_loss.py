# family: loss
"""Smooth L1 (Huber, beta 1) loss between two 4096x4096 tensors (mean reduction)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.smooth_l1_loss(predictions, targets)


ROWS = 4096
DIM = 4096


def get_inputs():
    predictions = torch.randn(ROWS, DIM) * 2.0
    targets = torch.randn(ROWS, DIM)
    return [predictions, targets]


def get_init_inputs():
    return []
