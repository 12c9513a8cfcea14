"""The model of gpuprof trace --torch-trace's test: a Net of two nn.Linear with a
functional relu between them, trained STEPS times by SGD (zero_grad, forward, backward,
step); exits with the status given, after the steps."""
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(32, 8)
for step in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    optimizer.zero_grad()
    loss = net(x).sum()
    loss.backward()
    optimizer.step()
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
