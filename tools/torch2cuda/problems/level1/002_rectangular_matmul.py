# family: matmul
"""Rectangular matrix multiplication (1000x1531) @ (1531x1200) with odd sizes that are not tile multiples."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 1000
K = 1531
N = 1200


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
