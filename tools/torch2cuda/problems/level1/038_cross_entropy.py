# family: loss
"""Cross-entropy loss of 8192x1000 logits against int64 class targets (mean reduction)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


BATCH = 8192
NUM_CLASSES = 1000


def get_inputs():
    logits = torch.randn(BATCH, NUM_CLASSES) * 2.0
    targets = torch.randint(0, NUM_CLASSES, (BATCH,))
    return [logits, targets]


def get_init_inputs():
    return []
