#!/usr/bin/env python3
"""Whole-process comparison: orchestrate vs. a plain PyTorch script, same torch.

Trains the demo's ConvNet (Adam) on Debian's Fashion-MNIST for the same
number of steps and batch size, once with `orchestrate run
recipes/fashion_mnist.toml` and once with the PyTorch loop a user would
otherwise write (tensors in memory, no DataLoader: the fastest plain
baseline), each as a whole process timed by the wall clock from its start to
its exit: setup, loading the data and the first steps included, which is
what a user waits for. A first pair runs and is discarded (cold caches), then
--repeats pairs alternate so machine noise hits both. Prints the medians of
each side's whole-process seconds and their ratio, each side's steady
images/s (orchestrate's report; the plain loop's own clock), the processor
and the load average.

Usage (from the repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/fashion_mnist_vs_pytorch.py [--steps 600] [--batch 128]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import machine  # noqa: E402


def plain_pytorch(steps, batch):
    """The plain loop, in this process (run as its own process by --plain)."""
    import torch
    import torch.nn as nn
    import common

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


def time_plain(steps, batch):
    start = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--plain", "--steps", str(steps), "--batch", str(batch)],
                         check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    return {"wall_s": wall, "images_per_s": json.loads(out)["images_per_s"]}


def time_orchestrate(binary, steps, batch, db):
    import common
    wall, run_id = common.run_orchestrate(binary, "recipes/fashion_mnist.toml", db,
                                          [f"run.max_steps={steps}", f"run.batch_size={batch}", "eval.enabled=false",
                                           "checkpoint.at_end=false"])
    return {"wall_s": wall, "images_per_s": common.report_row(binary, db, run_id)["images_per_s"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)  # the plain side's own process
    args = parser.parse_args()
    if args.plain:
        print(json.dumps(plain_pytorch(args.steps, args.batch)))
        return 0

    import torch
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.steps} steps of batch {args.batch}, "
          f"whole processes, 1 pair discarded then {args.repeats} alternating", flush=True)
    print(f"processor: {machine.processor()}; load average at the start {machine.load_average():.2f}", flush=True)
    ours, plain = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.repeats + 1):
            o = time_orchestrate(args.binary, args.steps, args.batch, os.path.join(scratch, f"b{i}.db"))
            p = time_plain(args.steps, args.batch)
            print(f"  pair {i}{' (discarded)' if i == 0 else ''}: orchestrate {o['wall_s']:.1f} s, "
                  f"plain {p['wall_s']:.1f} s", flush=True)
            if i > 0:
                ours.append(o)
                plain.append(p)
    median = statistics.median
    o_wall, p_wall = median(r["wall_s"] for r in ours), median(r["wall_s"] for r in plain)
    o_rate, p_rate = median(r["images_per_s"] for r in ours), median(r["images_per_s"] for r in plain)
    print(f"{'':22}{'whole process (s)':>18}{'steady images/s':>18}")
    print(f"{'orchestrate':22}{o_wall:18.1f}{o_rate:18.1f}")
    print(f"{'plain PyTorch script':22}{p_wall:18.1f}{p_rate:18.1f}")
    print(f"ratio orchestrate / PyTorch: {p_wall / o_wall:.2f}x by the whole process's wall clock, "
          f"{o_rate / p_rate:.2f}x by steady images/s (medians of {args.repeats}); load average now "
          f"{machine.load_average():.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
