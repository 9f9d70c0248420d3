#!/usr/bin/env python3
"""Side-by-side throughput: orchestrate vs. a plain PyTorch script, same torch.

Trains the demo's ConvNet (conv32-pool-conv64-pool-conv64-dense64-10, Adam
0.001) on Debian's Fashion-MNIST for the same number of steps and batch size,
once with `orchestrate run recipes/fashion_mnist.toml` and once with the
PyTorch training loop a user would otherwise write (tensors held in memory,
no DataLoader: the fastest plain baseline). Prints images/s, median step time
and their ratio.

Usage (from the repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/fashion_mnist_vs_pytorch.py [--steps 200] [--batch 512]
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load_train():
    images = read_idx(os.path.join(DATA, "train-images-idx3-ubyte.gz"), 16).reshape(-1, 1, 28, 28)
    labels = read_idx(os.path.join(DATA, "train-labels-idx1-ubyte.gz"), 8)
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.astype(np.int64))


def convnet():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.Flatten(),
        nn.Linear(64 * 3 * 3, 64), nn.ReLU(), nn.Linear(64, 10))


def pytorch_baseline(steps, batch):
    torch.manual_seed(42)
    images, labels = load_train()
    model = convnet()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    loss_fn = nn.CrossEntropyLoss()
    step_times = []
    step = 0
    while step < steps:
        order = torch.randperm(len(labels))
        for start in range(0, len(order) - batch + 1, batch):
            if step == steps:
                break
            t0 = time.perf_counter()
            index = order[start:start + batch]
            x = images[index].float().div_(255)
            y = labels[index]
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss.item()
            step_times.append(time.perf_counter() - t0)
            step += 1
    timed = step_times[1:]  # the first step pays one-time costs, as in orchestrate's report
    return {"median_step_s": statistics.median(timed), "images_per_s": batch * len(timed) / sum(timed)}


def orchestrate_run(binary, steps, batch):
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "bench.db")
        subprocess.run([binary, "run", "recipes/fashion_mnist.toml", "--set", f"run.max_steps={steps}",
                        "--set", f"run.batch_size={batch}", "--set", "eval.enabled=false", "--db", db, "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
        report = subprocess.run([binary, "report", "throughput", "--db", db, "--format", "json"], check=True,
                                capture_output=True, text=True)
        row = json.loads(report.stdout)[0]
        return {"median_step_s": row["median_step_s"], "images_per_s": row["images_per_s"],
                "data_wait_share": row["data_wait_share"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.steps} steps of batch {args.batch}",
          flush=True)
    ours = orchestrate_run(args.binary, args.steps, args.batch)
    plain = pytorch_baseline(args.steps, args.batch)
    print(f"{'':22}{'images/s':>12}{'median step ms':>16}")
    print(f"{'orchestrate':22}{ours['images_per_s']:12.0f}{ours['median_step_s'] * 1e3:16.1f}")
    print(f"{'plain PyTorch script':22}{plain['images_per_s']:12.0f}{plain['median_step_s'] * 1e3:16.1f}")
    print(f"ratio orchestrate / PyTorch: {ours['images_per_s'] / plain['images_per_s']:.2f}x images/s"
          f" (orchestrate data-wait share {ours['data_wait_share']:.1%})")


if __name__ == "__main__":
    sys.exit(main())
