# family: matmul
"""Batched matrix multiplication torch.bmm of (32, 255, 384) and (32, 384, 300) tensors."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


BATCH = 32
M = 255
K = 384
N = 300


def get_inputs():
    A = torch.randn(BATCH, M, K)
    B = torch.randn(BATCH, K, N)
    return [A, B]


def get_init_inputs():
    return []
