"""Broken problem: forward never returns (the reason is timeout)."""
import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        while True:
            time.sleep(0.05)


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
