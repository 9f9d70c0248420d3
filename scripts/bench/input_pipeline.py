#!/usr/bin/env python3
"""Input-pipeline throughput: decode JPEG + random-resized crop to 224x224 +
horizontal flip + mean/std normalization, the training input of an ImageNet
ResNet, from JPEG TFRecord files and from a JPEG image folder, measured in one
run on this machine for three loaders with the same number of workers:

  orchestrate  `orchestrate bench-input RECIPE`: the real training input
               (the dataset plugin, the `resnet` preset's train variant, the
               pipeline's worker threads and prefetch, finish_batch's float
               conversion and normalization) with no model. It prints its own
               rate from the first batch to the last; the process's wall time
               (plugin loading, indexing and the first batch included) is
               shown too. bench-input records nothing in the run store.
  DataLoader   torch.utils.data.DataLoader with `workers` worker processes:
               torchvision.io.decode_jpeg, v2.RandomResizedCrop(224),
               v2.RandomHorizontalFlip, v2.ToDtype(float32, scale) and
               v2.Normalize per image (torchvision's reference recipe). The
               folder is a map-style dataset, shuffled; the TFRecord files an
               iterable one, each worker reading its share of the files with
               the tfrecord package's reader.
  DALI         NVIDIA DALI's CPU pipeline (device_id=None) with `workers`
               threads: readers.file / readers.tfrecord,
               decoders.image_random_crop (decodes only the crop), resize to
               224x224, crop_mirror_normalize with a coin-flip mirror.

and, as the ceiling a decoder sets:

  decode only  one thread decoding the same JPEGs whole, from memory, with
               libjpeg-turbo (torchvision.io.decode_jpeg, torch limited to one
               thread): images/s per core. A pipeline that decodes only the
               crop's window, at a reduced DCT scale, can beat it.

Each pipeline's rate per core is its rate over its workers (each worker is a
thread or process with a core of its own when workers <= cores), shown beside
the ceiling.

Every loader serves the same number of batches of the same size; each rate is
images after the first batch over the time from the first batch to the last
(the first batch pays for starting threads or processes). The loaders take
turns --repeats times and each figure is the median, so a change in the
machine's load falls on all of them. The data: --images
JPEGs made from real Fashion-MNIST (Debian's dataset-fashion-mnist), each
upscaled to --size (500x375 by default, a typical ImageNet photo), tinted and textured with low-frequency colour and
film-grain noise so it compresses as a photo does, at quality 90; made once and
cached outside the clone ($ORCHESTRATE_CACHE or ~/.cache/orchestrate, under
bench/). DALI's index of each TFRecord file is beside them, in dali_index/.

Usage (from the repository root, after scripts/setup, which installs
torchvision and DALI, and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/input_pipeline.py
      [--workers 2] [--batch 64] [--batches 40] [--repeats 3] [--images 2000] [--size 500x375] [--max-side 0]
      [--orchestrate build/bin/orchestrate]
"""
import argparse
import importlib.machinery
import importlib.util
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZE = (500, 375)  # width, height: --size, a typical ImageNet photo by default
QUALITY = 90
TRAIN_SHARDS = 16
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def converter():
    """scripts/convert_dataset as a module: its TFRecord and image-folder writers."""
    path = os.path.join(REPO, "scripts", "convert_dataset")
    loader = importlib.machinery.SourceFileLoader("convert_dataset", path)
    spec = importlib.util.spec_from_loader("convert_dataset", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def photo_jpeg(pixels, rng):
    """A 28x28 Fashion-MNIST image as a 500x375 colour JPEG with photo-like texture."""
    from PIL import Image
    w, h = SIZE
    shape = np.asarray(Image.fromarray(pixels).resize(SIZE, Image.BICUBIC), np.float32)[..., None] / 255
    low = rng.random((12, 16, 3)).astype(np.float32)
    low = np.asarray(Image.fromarray((low * 255).astype(np.uint8)).resize(SIZE, Image.BICUBIC), np.float32) / 255
    background = 0.5 * rng.random(3).astype(np.float32) + 0.5 * low
    tint = rng.uniform(0.3, 1.0, 3).astype(np.float32) * (0.85 + 0.3 * low)
    grain = rng.normal(0, 0.05, (h, w, 3)).astype(np.float32)
    rgb = np.clip(shape * tint + (1 - shape) * background + grain, 0, 1)
    out = io.BytesIO()
    Image.fromarray((rgb * 255).astype(np.uint8)).save(out, format="JPEG", quality=QUALITY)
    return out.getvalue()


def dali_index(path):
    """Where DALI's index of a TFRecord file goes: beside the files, not among them (train-* would match it)."""
    return os.path.join(os.path.dirname(os.path.dirname(path)), "dali_index", os.path.basename(path) + ".idx")


def write_dali_index(path):
    """DALI's TFRecord index (what its tfrecord2idx writes): 'offset length' per record."""
    os.makedirs(os.path.dirname(dali_index(path)), exist_ok=True)
    with open(path, "rb") as f, open(dali_index(path), "w") as out:
        offset = 0
        while True:
            header = f.read(12)
            if len(header) < 12:
                break
            length = int.from_bytes(header[:8], "little")
            f.seek(length + 4, io.SEEK_CUR)
            out.write(f"{offset} {12 + length + 4}\n")
            offset += 12 + length + 4


def make_data(cache, count, max_side=0):
    """The JPEGs as an image folder and as TFRecord files, made once per --images, --size and --max-side."""
    capped = f"-max{max_side}" if max_side else ""
    root = os.path.join(cache, f"input_pipeline-{count}-{SIZE[0]}x{SIZE[1]}-q{QUALITY}{capped}")
    if os.path.exists(os.path.join(root, "done")):
        return root
    import shutil
    shutil.rmtree(root, ignore_errors=True)
    print(f"making {count} JPEGs of {SIZE[0]}x{SIZE[1]} in {root} (once)", flush=True)
    conv = converter()
    images, labels, _ = conv.load_split(conv.DEBIAN_SOURCE, "train", count)
    rng = np.random.default_rng(7)
    jpegs = [photo_jpeg(np.frombuffer(p, np.uint8).reshape(28, 28), rng) for p in images]
    shape = (SIZE[1], SIZE[0])
    if max_side:  # what `scripts/convert_dataset shrink --max-side N` writes
        jpegs = [conv.cap_longer_side(j, max_side, QUALITY) for j in jpegs]
        from PIL import Image
        width, height = Image.open(io.BytesIO(jpegs[0])).size
        shape = (height, width)
    os.makedirs(os.path.join(root, "tfrecord"))
    conv.write_tfrecord(os.path.join(root, "tfrecord"), "train", count, TRAIN_SHARDS,
                        lambda i: conv.example_bytes(jpegs[i], "jpeg", labels[i], shape, channels=3))
    # A few evaluation records and images, so neither dataset carves its train split.
    conv.write_tfrecord(os.path.join(root, "tfrecord"), "validation", 10, 1,
                        lambda i: conv.example_bytes(jpegs[i], "jpeg", labels[i], shape, channels=3))
    for name in sorted(os.listdir(os.path.join(root, "tfrecord"))):
        write_dali_index(os.path.join(root, "tfrecord", name))
    conv.write_image_folder(os.path.join(root, "folder", "train"), labels, "jpeg", lambda i: jpegs[i])
    one_each = [labels.index(label) for label in range(len(conv.CLASS_NAMES))]  # every class folder holds a file
    conv.write_image_folder(os.path.join(root, "folder", "val"), [labels[i] for i in one_each], "jpeg",
                            lambda i: jpegs[one_each[i]])
    mean_kb = sum(len(j) for j in jpegs) / len(jpegs) / 1024
    with open(os.path.join(root, "done"), "w") as f:
        f.write(f"{count} JPEGs, {mean_kb:.1f} KiB on average\n")
    return root


def train_records(root):
    tf = os.path.join(root, "tfrecord")
    return sorted(os.path.join(tf, n) for n in os.listdir(tf) if n.startswith("train-"))


def rate(start_first, end, images):
    return images / (end - start_first) if end > start_first else float("nan")


# --- orchestrate -------------------------------------------------------------

def orchestrate_recipe(source, root, args, cache):
    data = (f'plugin = "tfrecord"\ndir = "{root}/tfrecord"\nnum_classes = 10\nverify_images = false\n'
            f'index_cache_dir = "{cache}/tfrecord-index"\n' if source == "tfrecord" else
            f'plugin = "image_folder"\nroot = "{root}/folder"\nverify_images = false\n')
    return f"""schema_version = 1
[run]
name = "input_pipeline_{source}"
device = "cpu"
batch_size = {args.batch}
max_steps = {args.batches}
num_workers = {args.workers}
[data]
{data}channels = 3
[preprocessing]
plugin = "resnet"
[model]
plugin = "resnet_v1"
[optimizer]
plugin = "sgd"
"""


def measure_orchestrate(source, root, args, cache):
    with tempfile.TemporaryDirectory() as tmp:
        recipe = os.path.join(tmp, "recipe.toml")
        with open(recipe, "w") as f:
            f.write(orchestrate_recipe(source, root, args, cache))
        start = time.perf_counter()
        done = subprocess.run([args.orchestrate, "bench-input", recipe, "--batches", str(args.batches - 1)],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"input_pipeline: orchestrate bench-input failed:\n{done.stdout}{done.stderr}")
    found = re.search(r"images_per_s=([\d.]+) batches=(\d+)", done.stdout)
    if not found:
        sys.exit(f"input_pipeline: unexpected output of bench-input:\n{done.stdout}")
    batches = int(found.group(2)) + 1
    return {"images_per_s": float(found.group(1)), "wall_images_per_s": batches * args.batch / wall,
            "note": f"process wall {wall:.1f} s for {batches} batches"}


# --- torchvision DataLoader ----------------------------------------------------

def torchvision_transform():
    from torchvision.transforms import v2
    return v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip(),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])


class FolderImages(torch.utils.data.Dataset):
    def __init__(self, root):
        self.items = []
        classes = sorted(os.listdir(root))
        for label, name in enumerate(classes):
            for file in sorted(os.listdir(os.path.join(root, name))):
                self.items.append((os.path.join(root, name, file), label))
        self.transform = torchvision_transform()

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        import torchvision.io
        path, label = self.items[i]
        image = torchvision.io.decode_jpeg(torchvision.io.read_file(path), mode=torchvision.io.ImageReadMode.RGB)
        return self.transform(image), label


class RecordImages(torch.utils.data.IterableDataset):
    """The TFRecord files, each worker reading every workers-th file, over and over."""
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        import torchvision.io
        from tfrecord import example_pb2
        from tfrecord.reader import tfrecord_iterator
        info = torch.utils.data.get_worker_info()
        mine = self.files[info.id::info.num_workers] if info else self.files
        transform = torchvision_transform()
        while True:
            for path in mine:
                for record in tfrecord_iterator(path):
                    example = example_pb2.Example()
                    example.ParseFromString(record)
                    feature = example.features.feature
                    data = torch.frombuffer(bytearray(feature["image/encoded"].bytes_list.value[0]), dtype=torch.uint8)
                    image = torchvision.io.decode_jpeg(data, mode=torchvision.io.ImageReadMode.RGB)
                    yield transform(image), feature["image/class/label"].int64_list.value[0]


def measure_dataloader(source, root, args):
    if source == "folder":
        dataset, shuffle = FolderImages(os.path.join(root, "folder", "train")), True
    else:
        dataset, shuffle = RecordImages(train_records(root)), None
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=shuffle, num_workers=args.workers,
                                         persistent_workers=True, prefetch_factor=2, drop_last=True)
    served, images, first = 0, 0, None
    while served < args.batches:
        for batch, labels in loader:
            served += 1
            if first is None:
                first = time.perf_counter()
            else:
                images += len(labels)
            if served == args.batches:
                break
    return {"images_per_s": rate(first, time.perf_counter(), images), "note": f"{args.workers} worker processes"}


# --- decode only ------------------------------------------------------------------

def measure_decode_only(root, args):
    """One thread decoding the folder's JPEGs whole, from memory: the decoder's ceiling per core."""
    import torchvision.io
    train = os.path.join(root, "folder", "train")
    files = sorted(os.path.join(train, c, f) for c in os.listdir(train) for f in os.listdir(os.path.join(train, c)))
    count = min(len(files), args.batches * args.batch)
    encoded = [torchvision.io.read_file(path) for path in files[:count]]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torchvision.io.decode_jpeg(encoded[0], mode=torchvision.io.ImageReadMode.RGB)  # warm
        start = time.perf_counter()
        for data in encoded:
            torchvision.io.decode_jpeg(data, mode=torchvision.io.ImageReadMode.RGB)
        elapsed = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    return {"images_per_s": count / elapsed, "note": f"{count} JPEGs whole, 1 thread, libjpeg-turbo via torchvision"}


# --- DALI -----------------------------------------------------------------------

def measure_dali(source, root, args):
    try:
        from nvidia.dali import fn, pipeline_def, types
        import nvidia.dali.tfrecord as tfrec
    except Exception as error:  # noqa: BLE001: any failure to import is the reason printed
        return {"why_not": f"nvidia.dali does not import ({error}); scripts/setup installs nvidia-dali-cuda130"}

    @pipeline_def(batch_size=args.batch, num_threads=args.workers, device_id=None, seed=42, prefetch_queue_depth=2)
    def pipeline():
        if source == "folder":
            jpegs, labels = fn.readers.file(file_root=os.path.join(root, "folder", "train"), random_shuffle=True,
                                            name="reader")
        else:
            files = train_records(root)
            inputs = fn.readers.tfrecord(path=files, index_path=[dali_index(f) for f in files], random_shuffle=True,
                                         features={"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                                                   "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                                         name="reader")
            jpegs, labels = inputs["image/encoded"], inputs["image/class/label"]
        images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                               random_area=[0.08, 1.0], random_aspect_ratio=[0.75, 4 / 3])
        images = fn.resize(images, resize_x=224, resize_y=224)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD],
                                          mirror=fn.random.coin_flip())
        return images, labels

    try:
        pipe = pipeline()
        pipe.build()
        images, first = 0, None
        for served in range(args.batches):
            _, labels = pipe.run()
            if first is None:
                first = time.perf_counter()
            else:
                images += len(labels)
        return {"images_per_s": rate(first, time.perf_counter(), images),
                "note": f"{args.workers} threads, device_id=None"}
    except Exception as error:  # noqa: BLE001: DALI's own message says why it cannot run here
        return {"why_not": f"DALI's CPU pipeline failed: {str(error).splitlines()[0]}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="loader workers: threads or processes")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batches", type=int, default=40, help="batches each loader serves")
    parser.add_argument("--images", type=int, default=2000, help="JPEGs made from Fashion-MNIST's train split")
    parser.add_argument("--orchestrate", default=os.path.join(REPO, "build", "bin", "orchestrate"))
    parser.add_argument("--sources", default="tfrecord,folder")
    parser.add_argument("--repeats", type=int, default=3, help="turns each loader takes; the median is reported")
    parser.add_argument("--size", default="500x375", help="WIDTHxHEIGHT of the JPEGs made")
    parser.add_argument("--max-side", type=int, default=0,
                        help="pre-size the JPEGs as `scripts/convert_dataset shrink --max-side N` does (0: no)")
    args = parser.parse_args()
    global SIZE
    try:
        SIZE = tuple(int(side) for side in args.size.lower().split("x"))
        assert len(SIZE) == 2 and min(SIZE) >= 224
    except (ValueError, AssertionError):
        sys.exit(f"input_pipeline: --size {args.size}: give WIDTHxHEIGHT, both at least 224 (e.g. 800x600)")
    if not os.access(args.orchestrate, os.X_OK):
        sys.exit(f"input_pipeline: {args.orchestrate} is not an executable; build first or pass --orchestrate")
    for module in ("torchvision", "tfrecord", "PIL"):
        try:
            __import__(module)
        except ImportError:
            sys.exit(f"input_pipeline: Python package {module} is missing; run scripts/setup, which installs it")
    cache = os.path.join(os.environ.get("ORCHESTRATE_CACHE") or os.path.expanduser("~/.cache/orchestrate"), "bench")
    os.makedirs(cache, exist_ok=True)
    root = make_data(cache, args.images, args.max_side)
    with open(os.path.join(root, "done")) as f:
        described = f.read().strip()
    load = os.getloadavg()[0]
    print(f"data: {described}; {args.batches} batches of {args.batch} per loader, {args.workers} workers; "
          f"{os.cpu_count()} cores, load average {load:.2f}; torch {torch.__version__}", flush=True)
    # Untimed: the first pass reads every file into the page cache and builds
    # orchestrate's TFRecord index, so no loader pays for the disk.
    for source in args.sources.split(","):
        measure_orchestrate(source, root, argparse.Namespace(**{**vars(args), "batches": 2}), cache)
    # The loaders take turns, --repeats times, so a change in the machine's
    # load (other users) falls on all of them; each figure is the median.
    measures = {"orchestrate": lambda s: measure_orchestrate(s, root, args, cache),
                "DataLoader": lambda s: measure_dataloader(s, root, args),
                "DALI": lambda s: measure_dali(s, root, args),
                "decode only": lambda s: measure_decode_only(root, args)}
    cores_each = min(args.workers, os.cpu_count())
    for source in args.sources.split(","):
        runs = {loader: [] for loader in measures}
        for repeat in range(args.repeats):
            for loader, measure in measures.items():
                r = measure(source)
                runs[loader].append(r)
                if "why_not" in r:
                    continue
                extra = f" (whole process {r['wall_images_per_s']:.1f})" if "wall_images_per_s" in r else ""
                print(f"  {source} {loader} #{repeat + 1}: {r['images_per_s']:.1f} images/s{extra} "
                      f"[{r['note']}; load {os.getloadavg()[0]:.2f}]", flush=True)
        medians = {}
        for loader, rs in runs.items():
            if "why_not" in rs[0]:
                print(f"{source:9s} {loader:12s} not measured: {rs[0]['why_not']}", flush=True)
                continue
            medians[loader] = statistics.median(r["images_per_s"] for r in rs)
            spread = ", ".join(f"{r['images_per_s']:.0f}" for r in rs)
            print(f"{source:9s} {loader:12s} {medians[loader]:8.1f} images/s (median of {spread})", flush=True)
        goals = {"DataLoader": "  (goal >= 2.0x)", "DALI": "  (goal >= 1.3x)"}
        for other in ("DataLoader", "DALI"):
            if other in medians:
                print(f"{source:9s} orchestrate / {other}: {medians['orchestrate'] / medians[other]:.2f}x"
                      f"{goals[other]}", flush=True)
        ceiling = medians.get("decode only")
        for loader in ("orchestrate", "DataLoader", "DALI"):
            if loader in medians and ceiling:
                per_core = medians[loader] / cores_each
                print(f"{source:9s} {loader:12s} {per_core:8.1f} images/s per core = {per_core / ceiling:.2f}x the "
                      f"decode-only ceiling ({ceiling:.1f} per core)"
                      f"{'  (goal >= 1.0x)' if loader == 'orchestrate' else ''}", flush=True)
        print(f"load average now {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
