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
import sys
import tempfile

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

    def step(index):
        loss = loss_fn(model(images[index].float().div_(255)), labels[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()

    return common.time_plain_steps(step, common.shuffled_batches(len(labels), batch, steps), batch)


def orchestrate_run(binary, steps, batch, db):
    _, run_id = common.run_orchestrate(binary, "recipes/fashion_mnist.toml", db,
                                       [f"run.max_steps={steps}", f"run.batch_size={batch}", "eval.enabled=false"])
    return common.orchestrate_throughput(binary, db, run_id, batch * steps)


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
    common.print_comparison(ours, plain)


if __name__ == "__main__":
    sys.exit(main())
