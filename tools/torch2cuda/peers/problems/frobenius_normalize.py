# family: norm
"""Division of a 2048x2049 float32 tensor by its Frobenius norm (one scalar for the whole
tensor, as KernelBench's Frobenius-norm problem has it)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.norm(x, p="fro")


ROWS = 2048
COLS = 2049


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
