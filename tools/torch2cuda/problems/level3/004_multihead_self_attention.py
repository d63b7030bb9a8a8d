# family: network
"""Multi-head self-attention (fused QKV projection, 8 heads, output projection) on 8x256 tokens of width 256."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        B, T, E = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, E)
        return self.proj(y)


BATCH = 8
SEQ = 256
EMBED_DIM = 256
NUM_HEADS = 8


def get_inputs():
    x = torch.randn(BATCH, SEQ, EMBED_DIM)
    return [x]


def get_init_inputs():
    return [EMBED_DIM, NUM_HEADS]
