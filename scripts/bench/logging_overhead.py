#!/usr/bin/env python3
"""What logging to the run store costs a training step.

Runs the same recipe with logging on and off, alternating (on-off, then
off-on, ...) so machine noise hits both: on the ConvNet over Fashion-MNIST
(recipes/fashion_mnist.toml, batch 128) and on LeNet over mock 28x28 images
(batch 32, a step of a few milliseconds, where a fixed cost per step shows
most), the latter also with log_every = 1 (every step commits its train/*
metrics: the worst case). Evaluation and checkpoints are off, so the run is
its steps.

Off is ORCHESTRATE_STORE_BENCHMARK=discard: the run store drops every step
row and metric (core/store/record_call_clock.h). On is =measure: rows are
written as always, and the store also sums the time its record_* calls take
on the training thread. images/s comes from the wall clock: the run's
started_at to ended_at in the store, less its setup (time/setup_s of the "on"
runs, the same work either way). The overhead is 1 - on / off, the median
over the pairs; the target is under 1 %.

Usage (from the repository root, after scripts/setup and a build):
  python3 scripts/bench/logging_overhead.py [--repeats 5] [--convnet-steps 200] [--lenet-steps 1000] [--threads 1]
"""
import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime

TARGET = 0.01
NO_EXTRAS = ["eval.enabled=false", "checkpoint.at_end=false", "checkpoint.every_epochs=0"]
LENET_RECIPE = """schema_version = 1
[run]
name = "lenet_mock"
batch_size = 32
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 8192
test_size = 64
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.01
"""
RECORD_CALLS = re.compile(r"(\d+) record calls \(ORCHESTRATE_STORE_BENCHMARK=\w+\) took ([0-9.e+-]+) s")


def seconds_between(start, end):
    parse = lambda text: datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def run_once(binary, recipe, sets, logging, scratch, index):
    """One run; returns its wall seconds (start to end), setup seconds (None
    when logging is off: the metric is dropped) and seconds in record calls."""
    db = os.path.join(scratch, f"run{index}.db")
    command = [binary, "run", recipe, "--db", db, "--quiet"]
    for s in sets:
        command += ["--set", s]
    environment = dict(os.environ, ORCHESTRATE_STORE_BENCHMARK="measure" if logging else "discard")
    result = subprocess.run(command, env=environment, cwd=scratch, check=True, capture_output=True, text=True)
    calls = RECORD_CALLS.search(result.stderr)
    if not calls:
        raise RuntimeError(f"no record-call summary on stderr:\n{result.stderr}")
    with sqlite3.connect(db) as con:
        started, ended = con.execute("SELECT started_at, ended_at FROM runs").fetchone()
        setup = con.execute("SELECT value FROM metrics WHERE name = 'time/setup_s'").fetchone()
    os.remove(db)
    return seconds_between(started, ended), setup[0] if setup else None, float(calls.group(2))


def measure(binary, label, recipe, sets, steps, batch, repeats, scratch):
    runs = {True: [], False: []}
    for r in range(repeats):
        for logging in ((True, False) if r % 2 == 0 else (False, True)):
            runs[logging].append(run_once(binary, recipe, [f"run.max_steps={steps}", *NO_EXTRAS, *sets], logging,
                                          scratch, len(runs[True]) + len(runs[False])))
    setup = statistics.median(s for _, s, _ in runs[True])
    images = steps * batch
    on = [images / (wall - setup) for wall, _, _ in runs[True]]
    off = [images / (wall - setup) for wall, _, _ in runs[False]]
    overhead = statistics.median(1 - a / b for a, b in zip(on, off))
    # How far runs of one mode disagree among themselves: a difference
    # smaller than this is the machine's, not logging's.
    noise = max((max(v) - min(v)) / statistics.median(v) for v in (on, off))
    in_calls = statistics.median(calls / (wall - setup) for wall, _, calls in runs[True])
    ok = overhead < TARGET
    print(f"{label:34}{statistics.median(on):12.1f}{statistics.median(off):12.1f}{overhead * 100:11.2f} %"
          f"{noise * 100:10.1f} %{in_calls * 100:15.3f} %  {'pass' if ok else 'FAIL'}", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="pairs of runs per case")
    parser.add_argument("--convnet-steps", type=int, default=200)
    parser.add_argument("--lenet-steps", type=int, default=1000)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    # One thread: with every core busy elsewhere, LibTorch's threads wait for
    # each other, and that noise would swamp a 1 % difference.
    parser.add_argument("--threads", type=int, default=1, help="[run] threads of every run")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    convnet = os.path.abspath("recipes/fashion_mnist.toml")

    print(f"{args.repeats} alternating pairs per case; images/s by the wall clock (median); overhead = "
          f"1 - on/off (median of pairs); spread: (max - min) / median of one mode's images/s, the larger of the "
          f"two; record calls: their time on the training thread over the steps' time")
    print(f"{'case':34}{'on img/s':>12}{'off img/s':>12}{'overhead':>13}{'spread':>12}{'record calls':>17}"
          f"  target: overhead < 1 %")
    with tempfile.TemporaryDirectory() as scratch:
        lenet = os.path.join(scratch, "lenet_mock.toml")
        with open(lenet, "w") as f:
            f.write(LENET_RECIPE)
        threads = [f"run.threads={args.threads}"]
        results = [
            measure(binary, "ConvNet, Fashion-MNIST, batch 128", convnet, ["run.device=cpu", *threads],
                    args.convnet_steps, 128, args.repeats, scratch),
            measure(binary, "LeNet, mock 28x28, batch 32", lenet, threads, args.lenet_steps, 32, args.repeats, scratch),
            measure(binary, "LeNet, as above, log_every = 1", lenet, ["run.log_every=1", *threads], args.lenet_steps,
                    32, args.repeats, scratch),
        ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
