# family: loss
"""Hinge loss mean(clamp(1 - pred * target, min=0)) with +-1 targets over a 4096x4093 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1.0 - predictions * targets, min=0.0))


ROWS = 4096
DIM = 4093


def get_inputs():
    predictions = torch.randn(ROWS, DIM)
    targets = torch.randint(0, 2, (ROWS, DIM)).float() * 2.0 - 1.0
    return [predictions, targets]


def get_init_inputs():
    return []
