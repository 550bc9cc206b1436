#!/usr/bin/env python3
"""The resnet-train network and training step in PyTorch, for the baseline
that `resnet-train --preset tuned` must beat (tests/gpu/workload_check.sh).

Same network (workloads/resnet/net.h): ResNet-18 layout, widths 16/32/64/128,
[2, 2, 2, 2] basic blocks, 3x3 convs padding 1 without bias, batch norm, 1x1
projection shortcuts (conv + BN) on the stride-2 blocks, global average pool,
fully connected 10. Same step: sample a batch of 128 from a 50,000-image uint8
dataset resident on the GPU, random crop (reflect pad 4 + shift) and flip,
normalise, forward, cross-entropy, backward, SGD (lr 0.05, momentum 0.9,
weight decay 5e-4). One GPU: there is no all-reduce to compare.

Modes:
  eager    channels_last + bf16 autocast (fp32 master weights)
  compile  the same, with torch.compile(model) (--compile-mode, default
           "default"; compile time is excluded: it happens in warmup)

Prints the parameter count (701466, as resnet-train's network: checked by
workload_check.sh and tests/workload/reference_net_test.cpp), then one line
per mode:  RESULT <mode> img/s=<N> step_ms=<M> loss=<L>
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, in_c, out_c, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_c, out_c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_c)
        self.conv2 = nn.Conv2d(out_c, out_c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_c)
        self.proj = None
        if stride != 1 or in_c != out_c:
            self.proj = nn.Sequential(nn.Conv2d(in_c, out_c, 1, stride, 0, bias=False), nn.BatchNorm2d(out_c))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        s = x if self.proj is None else self.proj(x)
        return F.relu(self.bn2(self.conv2(h)) + s)


class Net(nn.Module):
    def __init__(self, widths=(16, 32, 64, 128), blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU())
        layers, in_c = [], widths[0]
        for stage, w in enumerate(widths):
            for i in range(blocks):
                layers.append(BasicBlock(in_c, w, 2 if (stage > 0 and i == 0) else 1))
                in_c = w
        self.blocks = nn.Sequential(*layers)
        self.fc = nn.Linear(in_c, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


MEAN = torch.tensor([0.4914, 0.4822, 0.4465]).view(1, 3, 1, 1)
STD = torch.tensor([0.2470, 0.2435, 0.2616]).view(1, 3, 1, 1)


class Data:
    """50,000 synthetic uint8 images on the GPU, stored reflect-padded to 40x40
    so a random crop is one gather."""

    def __init__(self, device, n=50000, seed=1):
        g = torch.Generator(device="cpu").manual_seed(seed)
        self.labels = torch.randint(0, 10, (n,), generator=g).to(device)
        colour = torch.tensor([[200, 60, 60], [60, 200, 60], [60, 60, 200], [200, 200, 60], [60, 200, 200]])
        base = colour[self.labels.cpu() % 5].view(n, 3, 1, 1).float()
        noise = torch.randint(-32, 33, (n, 3, 32, 32), generator=g).float()
        img = (base + noise).clamp(0, 255).to(torch.uint8).to(device)
        self.images = F.pad(img.float(), (4, 4, 4, 4), mode="reflect").to(torch.uint8)
        self.n = n
        self.mean, self.std = MEAN.to(device), STD.to(device)
        self.device = device

    def batch(self, b):
        idx = torch.randint(0, self.n, (b,), device=self.device)
        dy = torch.randint(0, 9, (b,), device=self.device)
        dx = torch.randint(0, 9, (b,), device=self.device)
        flip = torch.rand(b, device=self.device) < 0.5
        ar = torch.arange(32, device=self.device)
        rows = (dy[:, None] + ar[None, :])[:, None, :, None]
        cols = dx[:, None] + ar[None, :]
        cols = torch.where(flip[:, None], cols.flip(1), cols)[:, None, None, :]
        x = self.images[idx[:, None, None, None], torch.arange(3, device=self.device)[None, :, None, None], rows, cols]
        x = (x.float() / 255.0 - self.mean) / self.std
        return x.contiguous(memory_format=torch.channels_last), self.labels[idx]


def run(mode, args):
    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    model = Net().to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    data = Data(device, seed=args.seed)
    step_model = model
    if mode == "compile":
        step_model = torch.compile(model, mode=None if args.compile_mode == "default" else args.compile_mode)

    def step():
        x, y = data.batch(args.batch)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(step_model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    first = None
    for i in range(args.warmup):
        loss = step()
        if i == 0:
            first = loss.item()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    ips = args.steps * args.batch / secs
    print(f"RESULT {mode} img/s={ips:.0f} step_ms={1e3 * secs / args.steps:.3f} loss={first:.4f}->{loss.item():.4f}",
          flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["eager", "compile", "both"], default="both")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--compile-mode", default="default")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("pytorch_baseline: no CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cudnn.benchmark = True
    print(f"pytorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}",
          flush=True)
    print(f"NETWORK parameters={sum(p.numel() for p in Net().parameters())}", flush=True)
    for mode in (["eager", "compile"] if args.mode == "both" else [args.mode]):
        try:
            run(mode, args)
        except Exception as e:  # a failing compile must not hide the eager number
            print(f"RESULT {mode} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
