# family: network
"""Single-layer LSTM (256 -> 512, batch_first) over 32 steps for 64 sequences, returning the last hidden state."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)

    def forward(self, x):
        out, _ = self.lstm(x)
        return out[:, -1, :]


BATCH = 64
SEQ = 32
INPUT_SIZE = 256
HIDDEN_SIZE = 512


def get_inputs():
    x = torch.randn(BATCH, SEQ, INPUT_SIZE)
    return [x]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
