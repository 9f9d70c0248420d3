"""Shared by the benchmarks: Debian's Fashion-MNIST as tensors, the tutorial
ConvNet in plain PyTorch, running orchestrate and reading its run store, and
timing a plain PyTorch loop the way `orchestrate report throughput` times a run."""
import gzip
import json
import os
import sqlite3
import statistics
import subprocess
import time

import numpy as np
import torch
import torch.nn as nn

# Debian's copy; FASHION_MNIST_DIR names another (a GPU machine's, from gpu_bundle).
DATA = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load_split(prefix):
    images = read_idx(os.path.join(DATA, f"{prefix}-images-idx3-ubyte.gz"), 16).reshape(-1, 1, 28, 28)
    labels = read_idx(os.path.join(DATA, f"{prefix}-labels-idx1-ubyte.gz"), 8)
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.astype(np.int64))


def convnet():
    """The TF Estimator tutorial's ConvNet, with Keras' Glorot init as orchestrate's convnet uses."""
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.Flatten(),
        nn.Linear(64 * 3 * 3, 64), nn.ReLU(), nn.Linear(64, 10))
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return model


def evaluate(model, images, labels, batch=1000):
    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(labels), batch):
            x = images[start:start + batch].float().div_(255)
            correct += (model(x).argmax(1) == labels[start:start + batch]).sum().item()
    model.train()
    return correct / len(labels)


def run_orchestrate(binary, recipe, db, sets, extra=()):
    """Runs `orchestrate run` (with `extra` arguments, e.g. --nproc 2) and returns (wall seconds, run id)."""
    command = [binary, "run", recipe, "--db", db, "--quiet", *extra]
    for s in sets:
        command += ["--set", s]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    with sqlite3.connect(db) as con:
        run_id = con.execute("select max(id) from runs").fetchone()[0]
    return wall, run_id


def report_row(binary, db, run_id):
    out = subprocess.run([binary, "report", "throughput", str(run_id), "--db", db, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0]


def eval_curve(db, run_id):
    """[(seconds since the run started, epoch, top1)] for each evaluation, from
    the run store's own clock: setup + every step's total_s + evaluation time
    up to that evaluation."""
    with sqlite3.connect(db) as con:
        setup = con.execute("select value from metrics where run_id=? and name='time/setup_s'", (run_id,)).fetchone()
        setup = setup[0] if setup else 0.0
        curve = []
        for step, epoch, top1 in con.execute(
                "select step, epoch, value from metrics where run_id=? and name='eval/top1' order by step", (run_id,)):
            steps_s = con.execute("select sum(total_s) from step_timings where run_id=? and step<=?",
                                  (run_id, step)).fetchone()[0] or 0.0
            eval_s = con.execute("select max(value) from metrics where run_id=? and name='time/eval_s' and step<=?",
                                 (run_id, step)).fetchone()[0] or 0.0
            curve.append((setup + steps_s + eval_s, epoch, top1))
    return curve


# `orchestrate report throughput` leaves the first step (kernel selection,
# allocation, filling the pipeline) out of images/s when the run has at least
# this many steps (core/analysis/reports.cpp); the plain loops do the same.
REPORT_MIN_STEPS_TO_DROP_WARMUP = 11


def warmup_steps_dropped(steps):
    return 1 if steps >= REPORT_MIN_STEPS_TO_DROP_WARMUP else 0


def shuffled_batches(size, batch, steps, seed=42):
    """`steps` index tensors of `batch` examples: a fresh permutation every
    epoch, full batches only (as orchestrate's epochs are)."""
    generator = torch.Generator().manual_seed(seed)
    batches = []
    while len(batches) < steps:
        order = torch.randperm(size, generator=generator)
        for first in range(0, size - batch + 1, batch):
            if len(batches) == steps:
                break
            batches.append(order[first:first + batch])
    return batches


def time_plain_steps(step, batches, batch, sync=lambda: None):
    """Runs step(indices) over `batches` and returns images/s over the steps
    orchestrate's report would count, and over all of them (the wall clock).
    `sync` waits for the device (CUDA runs asynchronously), so nothing has to
    read the loss every step."""
    drop = warmup_steps_dropped(len(batches))
    start = timed_start = time.perf_counter()
    loss = None
    for i, indices in enumerate(batches):
        if i == drop:
            sync()
            timed_start = time.perf_counter()
        loss = step(indices)
    sync()
    end = time.perf_counter()
    if loss is not None and not torch.isfinite(loss).item():
        raise RuntimeError(f"the plain PyTorch loop diverged: loss {loss.item()}")
    return {"images_per_s": batch * (len(batches) - drop) / (end - timed_start),
            "wall_images_per_s": batch * len(batches) / (end - start)}


def orchestrate_throughput(binary, db, run_id, images):
    """images/s of a run from `orchestrate report throughput`, and from its own
    wall clock less setup (loading data, building the model) and evaluation;
    `images` is every image the run trained on."""
    row = report_row(binary, db, run_id)
    train_wall = row["wall_s"] - row["setup_s"] - row["eval_s"]
    return {"images_per_s": row["images_per_s"], "wall_images_per_s": images / train_wall,
            "accounted": row["accounted"], "data_wait_share": row["data_wait_share"]}


def print_comparison(ours, plain, label="plain PyTorch script", ours_label="orchestrate"):
    """The medians of alternating repeats side by side, and their ratio;
    returns the ratio of the report's images/s to the plain loop's."""
    def median(rows, key):
        return statistics.median(r[key] for r in rows)
    print(f"{'':22}{'images/s (report)':>20}{'images/s (wall)':>18}")
    for name, rows in ((ours_label, ours), (label, plain)):
        print(f"{name:22}{median(rows, 'images_per_s'):20.1f}{median(rows, 'wall_images_per_s'):18.1f}")
    ratio = median(ours, "images_per_s") / median(plain, "images_per_s")
    wall_ratio = median(ours, "wall_images_per_s") / median(plain, "wall_images_per_s")
    print(f"ratio {ours_label} / {label}: {ratio:.2f}x images/s ({wall_ratio:.2f}x by the wall clock; median of "
          f"{len(ours)}); {ours_label}'s report accounts for {median(ours, 'accounted'):.1%} of its wall time, "
          f"data wait {median(ours, 'data_wait_share'):.1%} of its step time", flush=True)
    return ratio
