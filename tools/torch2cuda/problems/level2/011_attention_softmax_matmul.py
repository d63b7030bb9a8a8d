# family: fusion
"""Scaled dot-product attention softmax(Q K^T / sqrt(d)) V for 16x8 heads, 512 tokens, head dim 64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = q.size(-1) ** -0.5
        att = torch.matmul(q, k.transpose(-2, -1)) * scale
        att = torch.softmax(att, dim=-1)
        return torch.matmul(att, v)


BATCH = 16
HEADS = 8
SEQ = 512
HEAD_DIM = 64


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
