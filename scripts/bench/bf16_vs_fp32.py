#!/usr/bin/env python3
"""bf16 autocast against fp32 on the Fashion-MNIST ConvNet: the same recipe,
seed and epochs, differing only in [precision] mode. Prints both test
accuracies, the difference in points, and each run's images/s (a CPU
without bf16 instructions computes bf16 far slower than fp32).

Usage: ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/bf16_vs_fp32.py [--epochs 2]
"""
import argparse
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()
    top1 = {}
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "precision.db")
        for mode in ("fp32", "bf16"):
            _, run_id = common.run_orchestrate(args.binary, "recipes/fashion_mnist.toml", db,
                                               [f"precision.mode={mode}", f"run.epochs={args.epochs}",
                                                "eval.every_epochs=0", f"run.name={mode}"])
            with sqlite3.connect(db) as con:
                top1[mode] = con.execute("select value from metrics where run_id=? and name='eval/top1' "
                                         "order by step desc limit 1", (run_id,)).fetchone()[0]
            rate = common.report_row(args.binary, db, run_id)["images_per_s"]
            print(f"{mode}: top1 {top1[mode]:.4f}  {rate:.0f} images/s", flush=True)
    print(f"bf16 - fp32: {100 * (top1['bf16'] - top1['fp32']):+.2f} points after {args.epochs} epochs")


if __name__ == "__main__":
    sys.exit(main())
