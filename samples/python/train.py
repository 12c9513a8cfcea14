"""A small PyTorch training loop for profiling: a few convolution, batch-norm and linear
layers trained on synthetic images for a fixed number of steps, deterministic so that
two runs launch the same kernels.

    python3 train.py [--steps N] [--warmup W] [--batch B] [--torch-profiler]
                     [--child-steps M] [--nvtx] [--loader-workers K]

--warmup W steps run first, then N timed steps; the script prints the timed steps' wall
time. --torch-profiler runs the N timed steps under torch.profiler with CUDA activities
and prints how many GPU kernels it saw. --child-steps M then trains M more steps in a
child process started with torch.multiprocessing (spawn), whose work a profiler records
in files of its own. --loader-workers K takes each step's batch from a DataLoader with K
worker processes (forked, as DataLoader does on Linux) and copies it to the GPU, instead of
training on one batch kept there.
"""
import argparse
import sys
import time

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64 * 16, 128), nn.ReLU(),
                                        nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def setup(batch, device):
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False   # no autotuning: the same kernels every run
    torch.backends.cudnn.deterministic = True
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(batch, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (batch,), device=device)
    return model, optimizer, images, labels


def train_step(model, optimizer, images, labels):
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss


def loader_batches(batch, device, workers):
    """Endless (images, labels) batches on the device, from a DataLoader over synthetic
    images on the host with `workers` worker processes."""
    generator = torch.Generator().manual_seed(1)
    data = torch.utils.data.TensorDataset(torch.randn(batch * 4, 3, 32, 32, generator=generator),
                                          torch.randint(0, 10, (batch * 4,), generator=generator))
    loader = torch.utils.data.DataLoader(data, batch_size=batch, num_workers=workers,
                                         persistent_workers=workers > 0)
    while True:
        for images, labels in loader:
            yield images.to(device), labels.to(device)


def train(steps, warmup, batch, use_profiler=False, nvtx=False, loader_workers=None):
    device = torch.device("cuda")
    model, optimizer, images, labels = setup(batch, device)
    batches = None if loader_workers is None else loader_batches(batch, device, loader_workers)

    def step(model, optimizer, images, labels):
        if batches is not None:
            images, labels = next(batches)
        return train_step(model, optimizer, images, labels)

    for _ in range(warmup):
        step(model, optimizer, images, labels)
    torch.cuda.synchronize()
    profiler = None
    if use_profiler:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        profiler.__enter__()
    start = time.perf_counter()
    loss = None
    if nvtx:  # NVTX ranges: "train" around the timed steps, "step" around each
        torch.cuda.nvtx.range_push("train")
    for _ in range(steps):
        if nvtx:
            torch.cuda.nvtx.range_push("step")
        loss = step(model, optimizer, images, labels)
        if nvtx:
            torch.cuda.nvtx.range_pop()
    if nvtx:
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    if profiler is not None:
        profiler.__exit__(None, None, None)
        print(f"torch.profiler kernels: {count_kernels(profiler)}")
    final = f", loss {loss.item():.4f}" if loss is not None else ""
    print(f"train: {steps} steps in {seconds:.6f} s{final}")
    return seconds


def count_kernels(profiler):
    """The GPU kernels torch.profiler recorded: device events that are neither copies,
    memsets nor the GPU-side copies of annotation ranges (Optimizer.step#SGD.step)."""
    from torch.autograd import DeviceType
    count = 0
    for event in profiler.events():
        if event.device_type != DeviceType.CUDA:
            continue
        name = event.name
        if name.startswith("Memcpy") or name.startswith("Memset"):
            continue
        if getattr(event, "is_user_annotation", False):  # a range drawn on the GPU row
            continue
        count += 1
    return count


def child(rank, steps, batch):
    train(steps, 0, batch)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--torch-profiler", action="store_true")
    parser.add_argument("--child-steps", type=int, default=0)
    parser.add_argument("--nvtx", action="store_true",
                        help="NVTX ranges around the timed steps and each step")
    parser.add_argument("--loader-workers", type=int, default=None, metavar="K",
                        help="batches from a DataLoader with K worker processes")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("train: no CUDA device", file=sys.stderr)
        return 1
    train(args.steps, args.warmup, args.batch, args.torch_profiler, args.nvtx,
          args.loader_workers)
    if args.child_steps:
        import torch.multiprocessing as mp
        mp.spawn(child, args=(args.child_steps, args.batch), nprocs=1, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
