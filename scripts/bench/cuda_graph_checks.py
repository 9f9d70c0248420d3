#!/usr/bin/env python3
"""What only a GPU can show about [run] cuda_graph (core/engine/train/cuda_graph_step.h):

1. agreement: the same 100-step run (--steps) with the CUDA graph (cuda_graph =
   "auto") and without it, step by step, then again with two micro-batches an
   update: train/loss at every step, and the largest difference relative to
   the eager loss. The first 3 updates are eager in both.
2. resume: a 400-step run with checkpoints every 100 updates killed with
   SIGKILL after its first checkpoint, then --resume, against the same run unbroken: whether
   the final model.safetensors files are byte-identical, with the graph and
   without it. The eager pair is the control: where it differs too, cuDNN's
   kernels were not deterministic between the processes, not the graph at
   fault. cuDNN's autotuning is off in every run (cudnn_benchmark = false),
   so no two processes time their way to different algorithms.

ResNet-18 on the mock dataset (32x32, batch 128, 10 classes), fp16 with
dynamic loss scaling unless --precision says otherwise. Prints each run's
cuda_graph events.

Usage (on a GPU machine, from the repository root):
  python3 scripts/bench/cuda_graph_checks.py --binary BUNDLE/prefix/bin/orchestrate [--precision fp16|bf16|fp32]
      [--steps 100] [--device cuda|cpu]
"""
import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

RECIPE = """schema_version = 1
[run]
name = "{name}"
seed = 7
device = "{device}"
max_steps = {steps}
batch_size = 128
num_workers = 4
log_every = 1
cudnn_benchmark = false
[data]
plugin = "mock"
channels = 3
height = 32
width = 32
num_classes = 10
train_size = 4096
[model]
plugin = "resnet_v1"
depth = 18
[optimizer]
plugin = "momentum"
lr = 0.05
[precision]
mode = "{precision}"
[eval]
enabled = false
[checkpoint]
every_steps = {every}
every_epochs = 0
at_end = true
[log]
progress = "never"
"""

GRAPH = ['run.cuda_graph="auto"']


def write_recipe(args, scratch, name, steps, every):
    path = os.path.join(scratch, name + ".toml")
    with open(path, "w") as f:
        f.write(RECIPE.format(name=name, device=args.device, precision=args.precision, steps=steps, every=every))
    return path


def losses(db):
    with sqlite3.connect(db) as con:
        run_id = con.execute("select max(id) from runs").fetchone()[0]
        rows = con.execute("select step, value from metrics where run_id=? and name='train/loss' order by step",
                           (run_id,)).fetchall()
    return dict(rows)


def graph_events(db):
    with sqlite3.connect(db) as con:
        return [m for (m,) in con.execute("select message from events where kind='cuda_graph' order by id")]


def final_weights(db, steps):
    folder = os.path.join(os.path.dirname(db), "checkpoints", os.path.basename(db))
    runs = sorted(os.listdir(folder))
    with open(os.path.join(folder, runs[0], f"step-{steps:08d}", "model.safetensors"), "rb") as f:
        return f.read()


def agreement(args, scratch, label, sets=()):
    recipe = write_recipe(args, scratch, "agreement_" + label, args.steps, 0)
    graph_db, eager_db = os.path.join(scratch, label + "_graph.db"), os.path.join(scratch, label + "_eager.db")
    began = time.perf_counter()
    common.run_orchestrate(args.binary, recipe, graph_db, [*GRAPH, *sets])
    graph_s = time.perf_counter() - began
    began = time.perf_counter()
    common.run_orchestrate(args.binary, recipe, eager_db, sets)
    eager_s = time.perf_counter() - began
    print(f"{label}: graph run {graph_s:.1f} s, eager run {eager_s:.1f} s (whole processes, {args.steps} steps)")
    for message in graph_events(graph_db):
        print("  event:", message)
    with_graph, without = losses(graph_db), losses(eager_db)
    steps = sorted(set(with_graph) & set(without))
    worst = max(steps, key=lambda s: abs(with_graph[s] - without[s]) / max(abs(without[s]), 1e-6))
    exact = sum(1 for s in steps if with_graph[s] == without[s])
    print(f"{label}: {len(steps)} steps compared; {exact} identical; largest relative difference "
          f"{abs(with_graph[worst] - without[worst]) / max(abs(without[worst]), 1e-6):.2e} at step {worst}")
    for s in (1, 3, 4, 5, 10, 50, 100):
        if s in with_graph and s in without:
            print(f"  step {s:3d}: graph {with_graph[s]:.6f}  eager {without[s]:.6f}")


def resume(args, scratch, graph):
    tag = "graph" if graph else "eager"
    sets = GRAPH if graph else []
    steps = 4 * args.steps
    recipe = write_recipe(args, scratch, "resume_" + tag, steps, args.steps)
    unbroken = os.path.join(scratch, f"unbroken_{tag}", "runs.db")
    broken = os.path.join(scratch, f"broken_{tag}", "runs.db")
    os.makedirs(os.path.dirname(unbroken))
    os.makedirs(os.path.dirname(broken))
    common.run_orchestrate(args.binary, recipe, unbroken, sets)
    process = subprocess.Popen([args.binary, "run", recipe, "--db", broken, "--quiet",
                                *(arg for s in sets for arg in ("--set", s))],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = os.path.join(os.path.dirname(broken), "checkpoints", "runs.db", "run-1", f"step-{args.steps:08d}",
                         "checkpoint.json")
    deadline = time.time() + 120
    while not os.path.exists(first) and process.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    folder = os.path.dirname(first).rsplit("/", 1)[0]
    saved = sorted(d for d in os.listdir(folder) if d.startswith("step-"))
    print(f"{tag}: killed with SIGKILL; checkpoints then: {', '.join(saved)}")
    if f"step-{steps:08d}" in saved:
        print(f"{tag}: the run finished before the kill: no resume to check")
        return
    common.run_orchestrate(args.binary, recipe, broken, sets, ["--resume", "1"])
    same = final_weights(unbroken, steps) == final_weights(broken, steps)
    print(f"{tag}: resumed run's model.safetensors at step {steps} "
          f"{'is byte-identical to' if same else 'DIFFERS from'} the unbroken run's")
    for message in graph_events(broken):
        print("  event:", message)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bin/orchestrate")
    parser.add_argument("--precision", choices=["fp16", "bf16", "fp32"], default="fp16")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cpu only tries the script itself: there the graph is never captured")
    parser.add_argument("--steps", type=int, default=100,
                        help="the agreement run's steps; the resume runs take 4 times as many, a checkpoint every N")
    parser.add_argument("--skip-resume", action="store_true")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        parts = [lambda: agreement(args, scratch, "plain"),
                 # Two micro-batches an update: the replays' gradients summed as backward sums them.
                 lambda: agreement(args, scratch, "accumulating", ['optimizer.wrappers.0.plugin="batch_gradients"',
                                                                   "optimizer.wrappers.0.num_batches=2"])]
        if not args.skip_resume:
            parts += [lambda graph=graph: resume(args, scratch, graph) for graph in (True, False)]
        for part in parts:
            try:
                part()
            except subprocess.CalledProcessError as error:  # one part's failure, named; the next parts still run
                print(f"FAILED: {error}; its output:\n{(error.stdout or '')[-2000:]}{(error.stderr or '')[-2000:]}",
                      flush=True)
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
