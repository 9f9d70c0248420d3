#!/usr/bin/env python3
"""Dimension-reduce training on Fashion-MNIST: its accuracy and its step cost.

The seed (MindSpore Boost) trains ResNet-50 on ImageNet for 70 epochs saving
weight snapshots, then 2 epochs of stage 2 in the 32-dimensional PCA
subspace of those snapshots: 66.05 % -> 74.31 % top-1. Here, on
recipes/fashion_mnist.toml (the ConvNet, Adam, batch 128) and one CPU:

  stage 1     E epochs; from epoch E (its last) a weight snapshot every
              --snapshot-every updates, the newest 40 kept
  stage 2     2 epochs from stage 1's last checkpoint, [dim_reduce] with 32
              components: the seed's rule as written (rule = "mindspore",
              3 trial steps) and the safeguarded rule with 3 and with
              --line-search-steps trial steps
  plain       the same recipe for E + 2 epochs from scratch: with the same
              seed its first E epochs are stage 1's, so it is stage 1 plus
              2 more epochs of ordinary training (its epoch-E accuracy is
              printed beside stage 1's to show it)

It prints each run's top-1 after each epoch, and the cost of one stage-2
update against one ordinary update (median step seconds from the run store).

Usage (from the repository root, after scripts/setup and a build):
  python3 scripts/bench/dim_reduce.py [--epochs 2] [--snapshot-every 10] [--line-search-steps 10]
      [--device cpu|cuda] [--set KEY=VALUE]...
"""
import argparse
import os
import sqlite3
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import subprocess  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_orchestrate(binary, recipe, db, sets):
    """Runs `orchestrate run`; a run that fails (stage 2 may diverge) is reported, not fatal."""
    command = [binary, "run", recipe, "--db", db, "--quiet"]
    for s in sets:
        command += ["--set", s]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with sqlite3.connect(db) as con:
        return None, con.execute("select max(id) from runs").fetchone()[0]


def outcome(db, run_id):
    with sqlite3.connect(db) as con:
        status, error = con.execute("select status, coalesce(error, '') from runs where id=?", (run_id,)).fetchone()
    return "" if status == "finished" else f"  ({status}: {error})"


def top1_by_epoch(db, run_id):
    with sqlite3.connect(db) as con:
        return [v for (v,) in con.execute(
            "select value from metrics where run_id=? and name='eval/top1' order by step", (run_id,))]


def median_step_s(db, run_id):
    with sqlite3.connect(db) as con:
        steps = [t for (t,) in con.execute("select total_s from step_timings where run_id=? and rank=0 order by step",
                                           (run_id,))]
    return statistics.median(steps[1:])  # the first update carries the warm-up


def last_checkpoint(db, run_id):
    with sqlite3.connect(db) as con:
        return con.execute("select path from checkpoints where run_id=? order by step desc limit 1",
                           (run_id,)).fetchone()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "orchestrate"))
    parser.add_argument("--epochs", type=int, default=2, help="stage 1's epochs (E)")
    parser.add_argument("--snapshot-every", type=int, default=10, help="updates between snapshots in epoch E")
    parser.add_argument("--components", type=int, default=32)
    parser.add_argument("--line-search-steps", type=int, default=10)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--set", action="append", default=[], help="another recipe override, for every run")
    args = parser.parse_args()

    recipe = os.path.join(ROOT, "recipes", "fashion_mnist.toml")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "runs.db")
        snapshots = os.path.join(tmp, "snapshots")
        common = [f"run.device={args.device}", *args.set]
        _, stage1 = run_orchestrate(args.binary, recipe, db, common + [
            f"run.epochs={args.epochs}", f"snapshots.every_steps={args.snapshot_every}",
            f"snapshots.from_epoch={args.epochs}", "snapshots.keep=40", f"snapshots.dir={snapshots}"])
        start = last_checkpoint(db, stage1)
        _, plain = run_orchestrate(args.binary, recipe, db, common + [f"run.epochs={args.epochs + 2}"])
        stage2 = {}
        variants = [("mindspore", 3)] + [("safeguarded", steps) for steps in sorted({3, args.line_search_steps})]
        for rule, steps in variants:
            _, stage2[rule, steps] = run_orchestrate(args.binary, recipe, db, common + [
                "run.epochs=2", f"checkpoint.init_from={start}", "dim_reduce.enabled=true",
                f"dim_reduce.snapshots={snapshots}", f"dim_reduce.n_components={args.components}",
                f"dim_reduce.rule={rule}", f"dim_reduce.line_search_steps={steps}",
                f"dim_reduce.pca_mat_path={os.path.join(tmp, 'pca.safetensors')}"])

        def show(label, run):
            print(f"{label:<50} " + "  ".join(f"{a:.4f}" for a in top1_by_epoch(db, run)) + outcome(db, run))

        print(f"Fashion-MNIST, ConvNet, batch 128, on {args.device}; top-1 after each epoch")
        show(f"stage 1 ({args.epochs} epochs)", stage1)
        show(f"plain ({args.epochs} + 2 epochs)", plain)
        for (rule, steps), run in stage2.items():
            show(f"stage 2 ({rule}, {args.components} components, {steps} trial steps)", run)
        plain_s = median_step_s(db, plain)
        print(f"\nmedian update: ordinary {plain_s * 1000:.2f} ms")
        for (rule, steps), run in stage2.items():
            s = median_step_s(db, run)
            print(f"               stage 2 ({rule}, {steps} trial steps) {s * 1000:.2f} ms = {s / plain_s:.2f} x ordinary")


if __name__ == "__main__":
    main()
