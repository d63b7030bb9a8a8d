"""Broken problem: forward crashes the process (SIGSEGV; the reason is crash)."""
import ctypes

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return ctypes.string_at(0)


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
