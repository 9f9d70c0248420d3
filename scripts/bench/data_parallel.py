#!/usr/bin/env python3
"""1 against 2 data-parallel workers on the Fashion-MNIST ConvNet
(recipes/fashion_mnist.toml, Adam), the same steps for each, alternating:

  1 worker, 1 thread, batch 128       the baseline of scaling efficiency
  2 workers (--nproc 2), 1 thread     batch 128 each, a global batch of 256
  1 worker, 2 threads, batch 256      the same global batch in one process

For each: images/s from the run store (`orchestrate report throughput`, the
job's steps) and from the wall clock (training time, setup and evaluation
left out), the share of step time spent waiting for the gradients' all-reduce
(rank 0's sync_s), and for 2 workers the scaling efficiency
images/s(2 workers) / (2 x images/s(1 worker)).

Usage (repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/data_parallel.py [--steps 300] [--repeats 2]
"""
import argparse
import os
import sqlite3
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

CONFIGS = [
    ("1 worker, 1 thread, batch 128", 1, 1, 128),
    ("2 workers, 1 thread each, batch 128 each", 2, 1, 128),
    ("1 worker, 2 threads, batch 256", 1, 2, 256),
]


def measure(binary, db, name, nproc, threads, batch, steps):
    sets = [f"run.name={name}", f"run.max_steps={steps}", f"run.batch_size={batch}", f"run.threads={threads}",
            "run.device=cpu", "eval.enabled=false", "checkpoint.at_end=false", "checkpoint.every_epochs=0"]
    wall, run_id = common.run_orchestrate(binary, "recipes/fashion_mnist.toml", db, sets,
                                          ["--nproc", str(nproc)] if nproc > 1 else [])
    row = common.report_row(binary, db, run_id)
    with sqlite3.connect(db) as con:
        images, total, sync = con.execute("select sum(images), sum(total_s), sum(sync_s) from step_timings "
                                          "where run_id=? and rank=0", (run_id,)).fetchone()
    train_wall = row["wall_s"] - row["setup_s"] - row["eval_s"]
    return {"images_per_s": row["images_per_s"], "wall_images_per_s": images / train_wall,
            "sync_share": (sync or 0.0) / total, "process_wall_s": wall}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()
    results = {label: [] for label, *_ in CONFIGS}
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "data_parallel.db")
        for repeat in range(args.repeats):
            for index, (label, nproc, threads, batch) in enumerate(CONFIGS):
                results[label].append(measure(args.binary, db, f"dp{index}_{repeat}", nproc, threads, batch,
                                              args.steps))
                r = results[label][-1]
                print(f"  repeat {repeat + 1}: {label}: {r['images_per_s']:.0f} images/s", flush=True)

    def median(label, key):
        return statistics.median(r[key] for r in results[label])

    print(f"\nFashion-MNIST ConvNet, {args.steps} steps each, median of {args.repeats} "
          f"({os.cpu_count()} cores)")
    print(f"{'':44}{'images/s (report)':>19}{'images/s (wall)':>17}{'all-reduce wait':>17}")
    for label, *_ in CONFIGS:
        print(f"{label:44}{median(label, 'images_per_s'):19.0f}{median(label, 'wall_images_per_s'):17.0f}"
              f"{median(label, 'sync_share'):17.1%}")
    one, two, alone = (label for label, *_ in CONFIGS)
    efficiency = median(two, "images_per_s") / (2 * median(one, "images_per_s"))
    print(f"scaling efficiency, 2 workers against 1 (1 thread each): {efficiency:.2f}")
    print(f"2 workers against 1 worker with both cores: "
          f"{median(two, 'images_per_s') / median(alone, 'images_per_s'):.2f}x images/s")


if __name__ == "__main__":
    sys.exit(main())
