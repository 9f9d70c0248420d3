#!/usr/bin/env python3
"""Input pipeline alone: first-batch latency and images/s by thread count.

Makes (once, under --data) ImageNet-like JPEGs, 500x375 in 8 classes, as an
image folder and as TFRecord files of the same JPEGs, then times
`orchestrate bench-input` (read, decode, ResNet train preprocessing:
random-resized crop to 224, flip; batched uint8; no model) with 1 and N
threads on both forms, and prints the figures and their ratios. With
--baseline BINARY the same runs are timed with another orchestrate build
(e.g. one made from main before the per-sample pipeline) and compared.

usage: ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/pipeline_threads.py
           [--binary build/bin/orchestrate] [--data /tmp/pipeline_bench] [--images 512]
           [--threads 1,2] [--batch 64] [--batches 12] [--baseline OTHER_BINARY]
"""
import argparse
import io
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLASSES = 8


def jpeg(rng, label):
    from PIL import Image
    h, w = 375, 500
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * (label + 1) / w) * 255, (y / h) * 255, ((x + y) % 97) * 2.6], axis=-1)
    pixels = np.clip(base + rng.normal(0, 18, (h, w, 3)), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=90)
    return out.getvalue()


def make_data(root, count):
    marker = os.path.join(root, f"done-{count}")
    if os.path.exists(marker):
        return
    from tensorboard.summary.writer.record_writer import RecordWriter
    from tfrecord import example_pb2
    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(root, "tfrecord"), exist_ok=True)
    shards = 4
    writers = [RecordWriter(open(os.path.join(root, "tfrecord", f"train-{s:05d}-of-{shards:05d}"), "wb"))
               for s in range(shards)]
    for i in range(count):
        label = i % CLASSES
        data = jpeg(rng, label)
        folder = os.path.join(root, "folder", f"{label}_class")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{i:05d}.jpg"), "wb") as f:
            f.write(data)
        example = example_pb2.Example()
        feature = example.features.feature
        feature["image/encoded"].bytes_list.value.append(data)
        feature["image/format"].bytes_list.value.append(b"jpeg")
        feature["image/class/label"].int64_list.value.append(label)
        writers[i * shards // count].write(example.SerializeToString())
    for writer in writers:
        writer.flush()
        writer._writer.close()
    open(marker, "w").close()


RECIPE = """schema_version = 1
[run]
seed = 1
device = "cpu"
batch_size = {batch}
[data]
plugin = "{plugin}"
{data}
[preprocessing]
plugin = "resnet"
[model]
plugin = "convnet"
[optimizer]
plugin = "sgd"
lr = 0.1
[eval]
enabled = false
"""


def write_recipe(root, form, batch):
    if form == "folder":
        data = f'root = "{root}/folder"\nval_fraction = 0.05\nchannels = 3\nverify_images = false'
        plugin = "image_folder"
    else:
        data = (f'dir = "{root}/tfrecord"\ntest_pattern = "train-*"\nchannels = 3\nnum_classes = {CLASSES}\n'
                'verify_images = false')
        plugin = "tfrecord"
    path = os.path.join(root, f"{form}.toml")
    with open(path, "w") as f:
        f.write(RECIPE.format(batch=batch, plugin=plugin, data=data))
    return path


def bench(binary, recipe, threads, batches, repeats):
    """Best of `repeats` runs (the machine is shared): (first batch s, images/s)."""
    best = None
    for _ in range(repeats):
        out = subprocess.run([binary, "bench-input", recipe, "--batches", str(batches),
                              "--set", f"run.num_workers={threads}", "--set", "run.threads=1"],
                             check=True, capture_output=True, text=True).stdout
        first = float(re.search(r"first_batch_s=([\d.]+)", out).group(1))
        rate = float(re.search(r"images_per_s=([\d.]+)", out).group(1))
        best = (first, rate) if best is None else (min(best[0], first), max(best[1], rate))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "orchestrate"))
    parser.add_argument("--baseline", help="another orchestrate build to compare with")
    parser.add_argument("--data", default="/tmp/orchestrate_pipeline_bench")
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    make_data(args.data, args.images)
    threads = [int(t) for t in args.threads.split(",")]
    builds = [("this", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
    print(f"{args.images} JPEGs 500x375 -> random-resized crop 224 + flip, batch {args.batch}, "
          f"{args.batches} timed batches after the first, best of {args.repeats}; {os.cpu_count()} cores")
    results = {}
    for form in ("folder", "tfrecord"):
        recipe = write_recipe(args.data, form, args.batch)
        for build, binary in builds:
            for t in threads:
                first, rate = bench(binary, recipe, t, args.batches, args.repeats)
                results[(form, build, t)] = (first, rate)
                print(f"{form:8s} {build:8s} threads {t}: first batch {first * 1000:7.1f} ms  {rate:7.1f} images/s",
                      flush=True)
    for form in ("folder", "tfrecord"):
        for build, _ in builds:
            one, many = results[(form, build, threads[0])], results[(form, build, threads[-1])]
            print(f"{form:8s} {build:8s} threads {threads[-1]} vs {threads[0]}: first batch "
                  f"{one[0] / many[0]:.2f}x sooner, images/s {many[1] / one[1]:.2f}x")
        if args.baseline:
            for t in threads:
                this, base = results[(form, "this", t)], results[(form, "baseline", t)]
                print(f"{form:8s} this vs baseline, threads {t}: first batch {base[0] / this[0]:.2f}x sooner, "
                      f"images/s {this[1] / base[1]:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
