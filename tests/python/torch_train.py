"""A small CPU training loop for the capture tests: conv, batch norm, linear,
SGD and a DataLoader with one worker process. Unmodified by the test; it only
takes the number of steps and, with --own-profiler, runs torch.profiler itself
around two steps."""
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 16, 16, generator=g), i % 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(8 * 8 * 8, 4)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    own_profiler = "--own-profiler" in sys.argv
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = DataLoader(Images(), batch_size=8, num_workers=1)
    loss_fn = nn.CrossEntropyLoss()
    done = 0
    while done < steps:
        for x, y in loader:
            if own_profiler and done == 2:
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                    for _ in range(2):
                        loss = loss_fn(model(x), y)
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                print("own profiler events:", len(prof.events()))
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("step", done, "loss", round(loss.item(), 4))
            done += 1
            if done == steps:
                break


if __name__ == "__main__":
    main()
