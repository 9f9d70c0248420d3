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

With --device cuda the plain loop keeps the whole data set and each batch's
indices on the GPU (the fastest a plain script can be: it only indexes) and
waits for the device only at the end; --compile adds the same loop under
torch.compile (default mode) as a third side. --set passes recipe overrides
to orchestrate (data.dir on a machine without Debian's data set).

Usage (from the repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/fashion_mnist_vs_pytorch.py [--steps 600]
      [--batch 128] [--device cpu|cuda] [--compile] [--set KEY=VALUE]...
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


def plain_pytorch(steps, batch, device, compiled):
    """The plain loop, in this process (run as its own process by --plain)."""
    import torch
    import torch.nn as nn
    import common

    torch.manual_seed(42)
    images, labels = common.load_split("train")
    images, labels = images.to(device), labels.to(device)
    model = common.convnet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    if compiled:  # its first step compiles; the steady rate leaves that step out
        model = torch.compile(model)

    def step(index):
        loss = loss_fn(model(images[index].float().div_(255)), labels[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()

    batches = [indices.to(device) for indices in common.shuffled_batches(len(labels), batch, steps)]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    return common.time_plain_steps(step, batches, batch, sync)


def time_plain(args, compiled=False):
    start = time.perf_counter()
    command = [sys.executable, __file__, "--plain", "--steps", str(args.steps), "--batch", str(args.batch),
               "--device", args.device] + (["--compile"] if compiled else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    return {"wall_s": wall, "images_per_s": json.loads(out)["images_per_s"]}


def time_orchestrate(args, db):
    import common
    sets = [f"run.max_steps={args.steps}", f"run.batch_size={args.batch}", "eval.enabled=false",
            "checkpoint.at_end=false", f'run.device="{args.device}"', *args.set]
    wall, run_id = common.run_orchestrate(args.binary, "recipes/fashion_mnist.toml", db, sets)
    return {"wall_s": wall, "images_per_s": common.report_row(args.binary, db, run_id)["images_per_s"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--compile", action="store_true", help="also the plain loop under torch.compile")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a recipe override")
    parser.add_argument("--binary", default="build/bin/orchestrate")
    parser.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)  # the plain side's own process
    args = parser.parse_args()
    if args.plain:
        print(json.dumps(plain_pytorch(args.steps, args.batch, args.device, args.compile)))
        return 0

    import torch
    device = torch.cuda.get_device_name() + ", " if args.device == "cuda" else ""
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.steps} steps of batch {args.batch} "
          f"on {args.device}, whole processes, 1 round discarded then {args.repeats} alternating", flush=True)
    print(f"machine: {device}{machine.processor()}; load average at the start {machine.load_average():.2f}",
          flush=True)
    sides = {"orchestrate": [], "plain PyTorch script": []}
    if args.compile:
        sides["plain, torch.compile"] = []
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.repeats + 1):
            round_ = {"orchestrate": time_orchestrate(args, os.path.join(scratch, f"b{i}.db")),
                      "plain PyTorch script": time_plain(args)}
            if args.compile:
                round_["plain, torch.compile"] = time_plain(args, compiled=True)
            print(f"  round {i}{' (discarded)' if i == 0 else ''}: " +
                  ", ".join(f"{name} {r['wall_s']:.1f} s" for name, r in round_.items()), flush=True)
            if i > 0:
                for name, r in round_.items():
                    sides[name].append(r)
    median = statistics.median
    walls = {name: median(r["wall_s"] for r in rows) for name, rows in sides.items()}
    rates = {name: median(r["images_per_s"] for r in rows) for name, rows in sides.items()}
    print(f"{'':22}{'whole process (s)':>18}{'steady images/s':>18}")
    for name in sides:
        print(f"{name:22}{walls[name]:18.1f}{rates[name]:18.1f}")
    for name in list(sides)[1:]:
        print(f"ratio orchestrate / {name}: {walls[name] / walls['orchestrate']:.2f}x by the whole process's wall "
              f"clock, {rates['orchestrate'] / rates[name]:.2f}x by steady images/s (medians of {args.repeats})",
              flush=True)
    print(f"load average now {machine.load_average():.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
