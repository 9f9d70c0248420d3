#!/usr/bin/env python3
"""The large-batch experiment on real Fashion-MNIST, all for the same epochs:
  1. batch 128 with momentum (the baseline);
  2. batch 8192 through batch_gradients (64 micro-batches of 128), no LARS;
  3. batch 8192 with lars + linear warm-up + polynomial decay (power 2),
     the LARS seed's recipe scaled down.
Prints the test accuracy of each. The LARS peak lr was chosen by a small
sweep on 5 epochs (2.0: 0.512, 4.0: 0.396, 10.0: diverged to chance); the
seed's 29.0 is for ResNet-50 with batch norm. The learning rates follow the linear
scaling rule from the baseline's 0.05 where it applies (0.05 x 64 = 3.2).

Usage: ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/large_batch.py [--epochs 5]
"""
import argparse
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

# The three runs share the ConvNet, the data, the seed and the epochs; each
# case adds its optimizer chain and schedule.
COMMON = """schema_version = 1
[run]
seed = 42
batch_size = 128          # per micro-batch
[data]
plugin = "fashion_mnist"
[model]
plugin = "convnet"
[eval]
every_epochs = 0
"""

CASES = [
    ("batch 128, momentum, lr 0.05", """
[optimizer]
plugin = "momentum"
lr = 0.05
weight_decay = 0.0001
"""),
    ("batch 8192 (64 x 128 accumulated), momentum, lr 3.2 (linear scaling), warm-up 1 epoch", """
[optimizer]
plugin = "momentum"
lr = 3.2
weight_decay = 0.0001
[[optimizer.wrappers]]
plugin = "batch_gradients"
num_batches = 64
[schedule]
plugin = "fixed"
warmup = "linear"
warmup_length = 1
warmup_unit = "epoch"
"""),
    ("batch 8192 (64 x 128), lars eta 0.001, warm-up 0.2 -> 2 then poly 2", """
[optimizer]
plugin = "momentum"
lr = 2.0
weight_decay = 0.0001
[[optimizer.wrappers]]
plugin = "batch_gradients"
num_batches = 64
[[optimizer.wrappers]]
plugin = "lars"
eta = 0.001
[schedule]
plugin = "polynomial"
power = 2.0
end_lr = 0.0001
warmup = "linear"
warmup_length = 1
warmup_unit = "epoch"
warmup_start_lr = 0.2
"""),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "large_batch.db")
        for index, (name, tables) in enumerate(CASES):
            recipe = os.path.join(scratch, f"case{index}.toml")
            with open(recipe, "w") as f:
                f.write(COMMON + tables)
            wall, run_id = common.run_orchestrate(args.binary, recipe, db,
                                                  [f"run.epochs={args.epochs}", f"run.name={name.split(',')[0]}"])
            with sqlite3.connect(db) as con:
                top1 = con.execute("select value from metrics where run_id=? and name='eval/top1' "
                                   "order by step desc limit 1", (run_id,)).fetchone()[0]
                updates = con.execute("select count(*) from step_timings where run_id=?", (run_id,)).fetchone()[0]
            results.append((name, updates, top1, wall))
            print(f"{name:62} {updates:6d} updates  top1 {top1:.4f}  ({wall:.0f} s)", flush=True)
    print(f"\n| run ({args.epochs} epochs) | updates | test top-1 |\n|---|---|---|")
    for name, updates, top1, _ in results:
        print(f"| {name} | {updates} | {top1:.4f} |")


if __name__ == "__main__":
    sys.exit(main())
