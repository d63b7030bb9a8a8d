# family: loss
"""Cosine similarity loss mean(1 - cos(a, b)) over 8192 pairs of 1023-dim vectors."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.mean(1.0 - F.cosine_similarity(a, b, dim=1))


BATCH = 8192
DIM = 1023


def get_inputs():
    a = torch.randn(BATCH, DIM)
    b = a * 0.5 + torch.randn(BATCH, DIM)
    return [a, b]


def get_init_inputs():
    return []
