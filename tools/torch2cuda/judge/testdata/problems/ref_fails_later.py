"""Broken problem that passes a check: get_inputs fails from its second call in a process on
(the check draws once; an evaluation draws a set per trial)."""
import torch
import torch.nn as nn

CALLS = [0]


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n) / k ** 0.5)

    def forward(self, x):
        return torch.relu(x @ self.w)


def get_inputs():
    CALLS[0] += 1
    if CALLS[0] > 1:
        raise RuntimeError("get_inputs: the input file is gone")
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64, 48]
