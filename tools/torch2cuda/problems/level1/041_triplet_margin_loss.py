# family: loss
"""Triplet margin loss (margin 1, L2 distance) over 4096 triplets of 1023-dim embeddings."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)


BATCH = 4096
DIM = 1023


def get_inputs():
    anchor = torch.randn(BATCH, DIM)
    positive = anchor + torch.randn(BATCH, DIM) * 0.9
    negative = torch.randn(BATCH, DIM)
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]
