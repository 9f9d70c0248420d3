#!/usr/bin/env python3
"""Side-by-side throughput: orchestrate vs. a plain PyTorch script, same torch.

Trains the demo's ConvNet (Adam) on Debian's Fashion-MNIST for the same
number of steps and batch size, once with `orchestrate run
recipes/fashion_mnist.toml` and once with the PyTorch loop a user would
otherwise write (tensors in memory, no DataLoader: the fastest plain
baseline), alternating `--repeats` times so machine noise hits both. Prints
images/s from the run store and from the wall clock, and their ratio.

Usage (from the repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/fashion_mnist_vs_pytorch.py [--steps 300] [--batch 128]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402


def pytorch_baseline(steps, batch):
    torch.manual_seed(42)
    images, labels = common.load_split("train")
    model = common.convnet()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    step_times = []
    step = 0
    start = time.perf_counter()
    while step < steps:
        order = torch.randperm(len(labels))
        for first in range(0, len(order) - batch + 1, batch):
            if step == steps:
                break
            t0 = time.perf_counter()
            index = order[first:first + batch]
            loss = loss_fn(model(images[index].float().div_(255)), labels[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss.item()
            step_times.append(time.perf_counter() - t0)
            step += 1
    wall = time.perf_counter() - start
    timed = step_times[1:]  # the first step pays one-time costs, as in orchestrate's report
    return {"images_per_s": batch * len(timed) / sum(timed), "wall_images_per_s": batch * steps / wall}


def orchestrate_run(binary, steps, batch, db):
    _, run_id = common.run_orchestrate(binary, "recipes/fashion_mnist.toml", db,
                                       [f"run.max_steps={steps}", f"run.batch_size={batch}", "eval.enabled=false"])
    row = common.report_row(binary, db, run_id)
    # The training wall time: the run's own, less setup (loading data) and evaluation.
    train_wall = row["wall_s"] - row["setup_s"] - row["eval_s"]
    return {"images_per_s": row["images_per_s"], "wall_images_per_s": batch * steps / train_wall,
            "accounted": row["accounted"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.steps} steps of batch {args.batch}, "
          f"{args.repeats} alternating repeats", flush=True)
    ours, plain = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.repeats):
            ours.append(orchestrate_run(args.binary, args.steps, args.batch, os.path.join(scratch, f"b{i}.db")))
            plain.append(pytorch_baseline(args.steps, args.batch))
    print(f"{'':22}{'images/s (report)':>20}{'images/s (wall)':>18}")
    for name, rows in (("orchestrate", ours), ("plain PyTorch script", plain)):
        print(f"{name:22}{statistics.median(r['images_per_s'] for r in rows):20.0f}"
              f"{statistics.median(r['wall_images_per_s'] for r in rows):18.0f}")
    ratio = statistics.median(r["images_per_s"] for r in ours) / statistics.median(r["images_per_s"] for r in plain)
    print(f"ratio orchestrate / PyTorch: {ratio:.2f}x images/s (median of {args.repeats}); orchestrate's report "
          f"accounts for {statistics.median(r['accounted'] for r in ours):.1%} of its wall time")


if __name__ == "__main__":
    sys.exit(main())
