# family: network
"""Pre-norm transformer MLP block x + fc2(gelu(fc1(layernorm(x)))) on 8x256 tokens of width 512."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


BATCH = 8
SEQ = 256
DIM = 512
HIDDEN = 2048


def get_inputs():
    x = torch.randn(BATCH, SEQ, DIM)
    return [x]


def get_init_inputs():
    return [DIM, HIDDEN]
