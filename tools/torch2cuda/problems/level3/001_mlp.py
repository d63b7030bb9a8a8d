# family: network
"""Three-layer MLP (1024 -> 2048 -> 1024 -> 500) with ReLU between layers, batch of 512."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(current, size))
            layers.append(nn.ReLU())
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


BATCH = 512
INPUT_SIZE = 1024
LAYER_SIZES = [2048, 1024]
OUTPUT_SIZE = 500


def get_inputs():
    x = torch.randn(BATCH, INPUT_SIZE)
    return [x]


def get_init_inputs():
    return [INPUT_SIZE, LAYER_SIZES, OUTPUT_SIZE]
