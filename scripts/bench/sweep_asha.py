#!/usr/bin/env python3
"""ASHA against the full grid: the shipped sweep (recipes/sweeps/fashion_mnist_lr.toml)
run twice in one go, once as shipped (ASHA stopping trials at epochs 1 and 3)
and once with its [sweep.early_stopping] table removed (every trial to its end).

Prints for each: the wall time, how busy the machine's CPUs were over it
(from /proc/stat), the best trial and its test top-1, and the trial-steps
(updates, summed over trials, read from each trial's run in the store); then
ASHA's best against the grid's (in points of top-1), ASHA's share of the
grid's trial-steps, and whether each trial that both ran to the end ended
on the same value (each trial is deterministic: it should).

The issue's goals are printed beside the figures: ASHA within 12 minutes on
the 2-core machine, its best within 0.5 points of the grid's, at most 40 %
of the grid's trial-steps, at least 90 % CPU busy.

Usage: python3 scripts/bench/sweep_asha.py [--binary build/bin/orchestrate] [--only asha]
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import machine  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "recipes", "sweeps", "fashion_mnist_lr.toml")


def cpu_times():
    """(busy, total) jiffies of all CPUs, from the first line of /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def grid_spec(directory):
    """The shipped spec without its early stopping, its recipe path made absolute."""
    with open(SPEC) as f:
        text = f.read()
    text = re.sub(r"\n\[sweep\.early_stopping\][^\[]*", "\n", text)
    text = text.replace('recipe = "../fashion_mnist.toml"',
                        'recipe = "%s"' % os.path.join(ROOT, "recipes", "fashion_mnist.toml"))
    text = text.replace("[sweep]\n", '[sweep]\nname = "fashion_mnist_lr_grid"\n', 1)
    path = os.path.join(directory, "fashion_mnist_lr_grid.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def run_sweep(binary, spec, db):
    busy0, total0 = cpu_times()
    start = time.monotonic()
    done = subprocess.run([binary, "sweep", spec, "--db", db, "--format", "json"], stdout=subprocess.PIPE,
                          stderr=sys.stderr, text=True)
    wall = time.monotonic() - start
    busy1, total1 = cpu_times()
    if done.returncode != 0:
        raise SystemExit(f"sweep {spec} failed ({done.returncode})")
    trials = json.loads(done.stdout)
    with sqlite3.connect(db) as connection:
        steps = dict(connection.execute("SELECT run_id, max(step) FROM step_timings GROUP BY run_id").fetchall())
    for trial in trials:
        trial["trained_steps"] = steps.get(trial["run"], 0)
    return {"wall": wall, "cpu_busy": (busy1 - busy0) / max(1, total1 - total0), "trials": trials}


def summary(name, result):
    best = result["trials"][0]
    trial_steps = sum(t["trained_steps"] for t in result["trials"])
    states = {}
    for t in result["trials"]:
        states[t["state"]] = states.get(t["state"], 0) + 1
    print(f"{name:6} {result['wall'] / 60:6.2f} min  CPU busy {result['cpu_busy']:6.1%}  "
          f"best trial {best['trial']:2d} top1 {best['value']:.4f}  trial-steps {trial_steps:7d}  "
          f"{', '.join(f'{n} {s}' for s, n in sorted(states.items()))}", flush=True)
    return best["value"], trial_steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "orchestrate"))
    parser.add_argument("--only", choices=["asha", "grid"], help="run one of the two")
    parser.add_argument("--keep", metavar="DIR", help="keep the two run stores (asha.db, grid.db) in DIR "
                        "(for `orchestrate sweep show 1 --db DIR/asha.db --plot ...`)")
    args = parser.parse_args()
    print(f"processor: {machine.processor()}; load average at the start "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.keep or temporary
        os.makedirs(scratch, exist_ok=True)
        specs = {"asha": SPEC, "grid": grid_spec(scratch)}
        for name in ("asha", "grid"):
            if args.only and args.only != name:
                continue
            print(f"--- {name}: orchestrate sweep {specs[name]}", flush=True)
            results[name] = run_sweep(args.binary, specs[name], os.path.join(scratch, name + ".db"))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    figures = {name: summary(name, result) for name, result in results.items()}
    if "asha" in results:
        asha = results["asha"]
        print(f"goal: ASHA in at most 12 min: {asha['wall'] / 60:.2f} min "
              f"({'met' if asha['wall'] <= 720 else 'NOT met'})")
        print(f"goal: CPU busy at least 90 %: {asha['cpu_busy']:.1%} ({'met' if asha['cpu_busy'] >= 0.9 else 'NOT met'})")
    if len(figures) == 2:
        points = (figures["grid"][0] - figures["asha"][0]) * 100
        share = figures["asha"][1] / figures["grid"][1]
        print(f"goal: ASHA's best within 0.5 points of the grid's: {points:+.2f} points "
              f"({'met' if points <= 0.5 else 'NOT met'})")
        print(f"goal: at most 40 % of the grid's trial-steps: {share:.1%} ({'met' if share <= 0.4 else 'NOT met'})")
        print(f"wall time ASHA / grid: {results['asha']['wall'] / results['grid']['wall']:.2f}")
        grid_values = {t["trial"]: t["value"] for t in results["grid"]["trials"]}
        both = [t for t in results["asha"]["trials"] if t["state"] == "finished"]
        same = sum(1 for t in both if grid_values.get(t["trial"]) == t["value"])
        print(f"trials run to the end in both: {len(both)}, of which {same} ended on the same top-1 exactly")


if __name__ == "__main__":
    main()
