# family: matmul
"""Matrix multiplication with a transposed right operand: A (1536x1024) @ B.T where B is 1000x1024."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B.t())


M = 1536
K = 1024
N = 1000


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
