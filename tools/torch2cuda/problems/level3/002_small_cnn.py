# family: network
"""Small CNN classifier: two conv-ReLU-maxpool stages and two linear layers on 64 RGB 32x32 images."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.reshape(x.size(0), -1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


BATCH = 64
NUM_CLASSES = 10


def get_inputs():
    x = torch.randn(BATCH, 3, 32, 32)
    return [x]


def get_init_inputs():
    return [NUM_CLASSES]
