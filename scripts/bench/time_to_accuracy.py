#!/usr/bin/env python3
"""Wall-clock time to a Fashion-MNIST test accuracy (default 91 %).

Side by side, in one run:
  - the TF Estimator tutorial's recipe (ConvNet, Adam 0.001, batch 512) as the
    plain PyTorch script a user would write, evaluating after every epoch;
  - orchestrate's fastest shipped recipe (recipes/fashion_mnist_fast.toml),
    its time read from its own run store (setup + steps + evaluations).
Each stops at the first evaluation at or above the target, or after
--max-epochs. Prints both times and their ratio.

Usage: ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/time_to_accuracy.py [--target 0.91]
"""
import argparse
import os
import sys
import tempfile
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402


def tutorial_in_pytorch(target, max_epochs):
    torch.manual_seed(42)
    images, labels = common.load_split("train")
    test_images, test_labels = common.load_split("t10k")
    model = common.convnet()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(1, max_epochs + 1):
        order = torch.randperm(len(labels))
        for first in range(0, len(order) - 512 + 1, 512):
            index = order[first:first + 512]
            loss = loss_fn(model(images[index].float().div_(255)), labels[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        top1 = common.evaluate(model, test_images, test_labels)
        elapsed = time.perf_counter() - start
        print(f"  pytorch tutorial  epoch {epoch:2d}  top1 {top1:.4f}  {elapsed:6.1f} s", flush=True)
        if top1 >= target:
            return elapsed, epoch, top1
    return None, max_epochs, top1


def orchestrate_fast(binary, target, max_epochs, db):
    _, run_id = common.run_orchestrate(binary, "recipes/fashion_mnist_fast.toml", db, [])
    best = None
    for seconds, epoch, top1 in common.eval_curve(db, run_id):
        print(f"  orchestrate fast  epoch {epoch:2d}  top1 {top1:.4f}  {seconds:6.1f} s", flush=True)
        if best is None and top1 >= target:
            best = (seconds, epoch, top1)
    return best or (None, max_epochs, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", type=float, default=0.91)
    parser.add_argument("--max-epochs", type=int, default=20, help="for the PyTorch tutorial run")
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; target top-1 {args.target}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        ours = orchestrate_fast(args.binary, args.target, args.max_epochs, os.path.join(scratch, "fast.db"))
    plain = tutorial_in_pytorch(args.target, args.max_epochs)
    for name, (seconds, epoch, _) in (("orchestrate fast recipe", ours), ("PyTorch tutorial recipe", plain)):
        print(f"{name:26}" + (f"{seconds:7.1f} s (epoch {epoch})" if seconds else f"not reached in {epoch} epochs"))
    if ours[0] and plain[0]:
        print(f"ratio: orchestrate reaches {args.target:.0%} {plain[0] / ours[0]:.2f}x sooner")
    elif ours[0]:
        print(f"ratio: the tutorial recipe did not reach {args.target:.0%} in {plain[1]} epochs; "
              f"orchestrate took {ours[0]:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
