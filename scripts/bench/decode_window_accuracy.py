#!/usr/bin/env python3
"""Does decoding only the crop change what a model learns? A ResNet-18
trained through the `resnet` preset on a JPEG image folder, twice, the same
recipe and seed:

  windowed  the default: each training crop is decoded alone, at the
            smallest DCT scale that keeps it at least `size` (1/2, 1/4 ...
            of each side), and the eval images at the scale that keeps the
            resize side;
  whole     every image decoded whole at full scale and the window cut out
            by the host, as before decode windows (what `[run] cache_mb`
            does: a kept image serves every epoch's crop).

Prints each run's final top-1 on the validation folder and the difference in
points. The crops' boxes, flips and order are the same in both (the sample
seeds); only the pixels' resampling differs where a window was decoded at a
reduced scale.

The data: JPEG photos made from real Fashion-MNIST (Debian's
dataset-fashion-mnist) the way scripts/bench/input_pipeline.py makes them
(500x375 by default, photo-like texture, quality 90), --train images from the
train split and --val from the test split, made once and cached outside the
clone. The preset's `size` defaults to 64 (eval resize 73) so that two
epochs take minutes on a small CPU, and so that most training windows of a
500x375 photo decode at 1/2 or 1/4 scale: the case where the pixels differ.
Adam at 1e-3 with a cosine decay to 0 over the run, batch 64: a schedule that
learns within two epochs of a few thousand images and ends where the weights
have settled (with a constant rate the same arm's top-1 moved by 9 points
between two seeds).

One seed cannot show a difference of 0.5 points: the two arms' pixels differ
slightly, so their trajectories part after the first steps and each arm's
top-1 is one draw. --seeds runs both arms for each seed and reports the mean
difference with its standard error over the seeds (a paired comparison).

At --size 224 on these 500x375 photos no window can be decoded at a reduced
scale (that needs both of its sides at least 448), so the two arms see the
same pixels and must train to the same top-1 exactly: a check of the
decoder, not of accuracy.

--max-side N adds a third arm, pre-sized: the same folder copied as
`scripts/convert_dataset shrink --max-side N` writes it (train and val, as
FFCV stores both at its max_resolution), trained with windows. The storage
trade of the preset's 224 and --max-side 320 is, at size 64, --max-side 91
(the same ratio): most crops then have fewer pixels than the output and are
enlarged.

Usage: ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/decode_window_accuracy.py
           [--train 8000] [--val 1000] [--epochs 2] [--size 64] [--seeds 42] [--max-side 0]
           [--binary build/bin/orchestrate]
"""
import argparse
import os
import sqlite3
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
import input_pipeline  # noqa: E402


def make_folder(cache, train, val):
    """root/train/<class>/*.jpg and root/val/<class>/*.jpg, made once."""
    width, height = input_pipeline.SIZE
    root = os.path.join(cache, f"decode_window_accuracy-{train}-{val}-{width}x{height}-q{input_pipeline.QUALITY}")
    if os.path.exists(os.path.join(root, "done")):
        return root
    import shutil
    shutil.rmtree(root, ignore_errors=True)
    print(f"making {train} + {val} JPEGs of {width}x{height} in {root} (once)", flush=True)
    conv = input_pipeline.converter()
    rng = np.random.default_rng(11)
    for split, folder, count in (("train", "train", train), ("test", "val", val)):
        images, labels, _ = conv.load_split(conv.DEBIAN_SOURCE, split, count)
        jpegs = [input_pipeline.photo_jpeg(np.frombuffer(p, np.uint8).reshape(28, 28), rng) for p in images]
        conv.write_image_folder(os.path.join(root, folder), labels, "jpeg", lambda i: jpegs[i])
    with open(os.path.join(root, "done"), "w") as f:
        f.write(f"{train} train and {val} val JPEGs\n")
    return root


def shrunk_folder(root, max_side):
    """The folder at `root` with every image's longer side capped, made once."""
    out = f"{root}-max{max_side}"
    if os.path.exists(os.path.join(out, "done")):
        return out
    import shutil
    shutil.rmtree(out, ignore_errors=True)
    print(f"shrinking {root} to a longer side of {max_side} in {out} (once)", flush=True)
    images, resized = input_pipeline.converter().shrink_folder(root, out, max_side, input_pipeline.QUALITY)
    with open(os.path.join(out, "done"), "w") as f:
        f.write(f"{images} images, {resized} resized\n")
    return out


def recipe(root, args, seed):
    return f"""schema_version = 1
[run]
name = "decode_window_accuracy"
device = "cpu"
seed = {seed}
epochs = {args.epochs}
batch_size = 64
num_workers = 2
[data]
plugin = "image_folder"
root = "{root}"
verify_images = false
channels = 3
[preprocessing]
plugin = "resnet"
size = {args.size}
resize_size = {args.size * 8 // 7}
[model]
plugin = "resnet_v1"
depth = 18
[optimizer]
plugin = "adam"
lr = 0.001
eps = 1e-8
[schedule]
plugin = "cosine"
[eval]
every_epochs = 0
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=int, default=8000)
    parser.add_argument("--val", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--seeds", default="42", help="comma-separated: both arms are trained once per seed")
    parser.add_argument("--max-side", type=int, default=0, help="also train on a copy capped at this longer side")
    parser.add_argument("--arms", default="", help="comma-separated subset of windowed,whole,pre-sized (default: all)")
    parser.add_argument("--binary", default="build/bin/orchestrate")
    args = parser.parse_args()
    seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    cache = os.path.join(os.environ.get("ORCHESTRATE_CACHE", os.path.expanduser("~/.cache/orchestrate")), "bench")
    root = make_folder(cache, args.train, args.val)
    arms = [("windowed", ["run.name=windowed"]), ("whole", ["run.name=whole", "run.cache_mb=8192"])]
    if args.max_side:
        arms.append(("pre-sized", ["run.name=pre-sized", f"data.root={shrunk_folder(root, args.max_side)}"]))
    if args.arms:
        arms = [(arm, sets) for arm, sets in arms if arm in args.arms.split(",")]
    print(f"load average at the start: {os.getloadavg()[0]:.2f}", flush=True)
    differences = {}  # arm -> its top-1 minus whole's, in points, per seed
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "runs.db")
        for seed in seeds:
            path = os.path.join(scratch, f"recipe-{seed}.toml")
            with open(path, "w") as f:
                f.write(recipe(root, args, seed))
            top1 = {}
            # cache_mb large enough for every decoded image: the datasets then
            # decode whole images and the host cuts each window out.
            for arm, sets in arms:
                start = time.perf_counter()
                _, run_id = common.run_orchestrate(args.binary, path, db, sets)
                wall = time.perf_counter() - start
                with sqlite3.connect(db) as con:
                    top1[arm] = con.execute("select value from metrics where run_id=? and name='eval/top1' "
                                            "order by step desc limit 1", (run_id,)).fetchone()[0]
                rate = common.report_row(args.binary, db, run_id)["images_per_s"]
                print(f"seed {seed:<5d} {arm:10s} top-1 {100 * top1[arm]:.2f} %  ({rate:.0f} images/s training, "
                      f"{wall:.0f} s wall)", flush=True)
            for arm in top1:
                if arm != "whole" and "whole" in top1:
                    differences.setdefault(arm, []).append(100 * (top1[arm] - top1["whole"]))
                    print(f"seed {seed:<5d} {arm} - whole: {differences[arm][-1]:+.2f} points", flush=True)
    for arm, values in differences.items():
        mean = float(np.mean(values))
        spread = (f" +- {float(np.std(values, ddof=1)) / np.sqrt(len(values)):.2f} (standard error)"
                  if len(values) > 1 else " (one seed: no error estimate)")
        print(f"{arm} - whole over {len(seeds)} seed(s): {mean:+.2f} points{spread} after {args.epochs} epochs "
              f"({args.train} train, {args.val} val images, size {args.size})")
    print(f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
