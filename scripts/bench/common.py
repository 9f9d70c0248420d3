"""Shared by the benchmarks: Debian's Fashion-MNIST as tensors, the tutorial
ConvNet in plain PyTorch, and running orchestrate and reading its run store."""
import gzip
import json
import os
import sqlite3
import subprocess
import time

import numpy as np
import torch
import torch.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"


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


def run_orchestrate(binary, recipe, db, sets):
    """Runs `orchestrate run` and returns (wall seconds, run id)."""
    command = [binary, "run", recipe, "--db", db, "--quiet"]
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
