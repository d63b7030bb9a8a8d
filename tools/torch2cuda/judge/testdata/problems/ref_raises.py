"""Broken problem: forward raises (the reference_error reason is crash)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n))

    def forward(self, x):
        return x @ self.w.t()  # (32, 64) @ (48, 64): the shapes do not match


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64, 48]
