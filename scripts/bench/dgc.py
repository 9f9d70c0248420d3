#!/usr/bin/env python3
"""Deep Gradient Compression against the dense all-reduce, side by side in one
run: 2 data-parallel workers (--nproc 2) train the Fashion-MNIST ConvNet with
the same data, steps and momentum SGD, once averaging the whole gradient
(bucketed all-reduce) and once with [gradient_compression] plugin = "dgc"
(sparsity warm-up 75 % -> 99.9 %, momentum correction and masking).

For each: the final test top-1, the gradient bytes rank 0 sent per update
after the sparsity warm-up (from the run store's step_timings.bytes_sent),
the compression ratio dense / DGC, the share of step time spent
communicating (compression included), and images/s from the run store and
from the wall clock.

Usage (repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/dgc.py [--epochs 4] [--epochs-per-stage 0.5]
"""
import argparse
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

# The tutorial's ConvNet with momentum SGD at a fixed lr; each configuration
# below sets the optimizer and [gradient_compression].
RECIPE = """schema_version = 1
[run]
device = "cpu"
batch_size = 64
threads = 1
num_workers = 0
[data]
plugin = "fashion_mnist"
[model]
plugin = "convnet"
[optimizer]
plugin = "sgd"
lr = 0.05
weight_decay = 0.0005
[eval]
every_epochs = 0
[checkpoint]
at_end = false
"""


def measure(binary, recipe, db, name, epochs, sets):
    wall, run_id = common.run_orchestrate(binary, recipe, db, [f"run.name={name}", f"run.epochs={epochs}", *sets],
                                          ["--nproc", "2"])
    row = common.report_row(binary, db, run_id)
    with sqlite3.connect(db) as con:
        images, total, sync = con.execute("select sum(images), sum(total_s), sum(sync_s) from step_timings "
                                          "where run_id=? and rank=0", (run_id,)).fetchone()
        last_epoch = con.execute("select max(epoch) from step_timings where run_id=?", (run_id,)).fetchone()[0]
        # After the warm-up: the last epoch's updates.
        sent = con.execute("select avg(bytes_sent), min(bytes_sent), max(bytes_sent) from step_timings "
                           "where run_id=? and rank=0 and epoch=?", (run_id, last_epoch)).fetchone()
        top1 = con.execute("select value from metrics where run_id=? and name='eval/top1' order by step desc "
                           "limit 1", (run_id,)).fetchone()[0]
    train_wall = row["wall_s"] - row["setup_s"] - row["eval_s"]
    return {"top1": top1, "bytes": sent[0], "bytes_range": (sent[1], sent[2]), "sync_share": sync / total,
            "images_per_s": row["images_per_s"], "wall_images_per_s": images / train_wall}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--epochs-per-stage", type=float, default=0.5,
                        help="DGC's sparsity stages last this long (the paper: 1 epoch of 90)")
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()
    configs = [
        ("dense all-reduce, momentum 0.9", ["optimizer.plugin=momentum", "optimizer.momentum=0.9",
                                            "gradient_compression.plugin=none"]),
        ("dgc, momentum 0.9 (corrected)", ["optimizer.plugin=sgd", "gradient_compression.plugin=dgc",
                                           "gradient_compression.momentum=0.9",
                                           f"gradient_compression.epochs_per_stage={args.epochs_per_stage}"]),
    ]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "dgc.db")
        recipe = os.path.join(scratch, "dgc.toml")
        with open(recipe, "w") as f:
            f.write(RECIPE)
        for index, (label, sets) in enumerate(configs):
            results[label] = measure(args.binary, recipe, db, f"dgc_bench{index}", args.epochs, sets)
            print(f"  {label}: top-1 {results[label]['top1']:.4f}", flush=True)
    print(f"\nFashion-MNIST ConvNet, 2 workers x batch 64, {args.epochs} epochs, lr 0.05 "
          f"({os.cpu_count()} cores)")
    print(f"{'':34}{'test top-1':>11}{'bytes/update':>14}{'comm. share':>13}{'img/s (report)':>16}{'img/s (wall)':>14}")
    for label, r in results.items():
        print(f"{label:34}{r['top1']:11.4f}{r['bytes']:14.0f}{r['sync_share']:13.1%}{r['images_per_s']:16.0f}"
              f"{r['wall_images_per_s']:14.0f}")
    dense, dgc = results.values()
    print(f"compression ratio (bytes per update in the last epoch): {dense['bytes'] / dgc['bytes']:.0f}x "
          f"(DGC sent {dgc['bytes_range'][0]:.0f}..{dgc['bytes_range'][1]:.0f} bytes)")
    print(f"top-1 difference, DGC - dense: {100 * (dgc['top1'] - dense['top1']):+.2f} points")


if __name__ == "__main__":
    sys.exit(main())
