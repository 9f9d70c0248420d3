#!/usr/bin/env python3
"""Side-by-side throughput of ResNet: `orchestrate run` against a plain
PyTorch script with torchvision's model, same torch, batch, threads and precision.

orchestrate trains `resnet_v1` on the `mock` dataset (synthetic images,
generated on the fly by the data pipeline) from a recipe this script writes;
the plain script trains torchvision's resnet with the data set as one tensor in
the training device's memory (the fastest a plain script can be: it only
indexes). Both use SGD with momentum 0.9, lr 0.01, no weight decay, and take
the same steps; they alternate `--repeats` times so machine noise hits both.
For each image size it prints images/s from the run store (`orchestrate report
throughput`, which leaves out the first step when a run has at least 11) and
from the wall clock (every step), for both, and the ratio.

On the CPU (default): ResNet-18, fp32 (or --precision bf16), 64x64 images at
batch 32 and 224x224 images at batch 8, one intra-op thread per core.
With --device cuda: ResNet-50, fp16 autocast with dynamic loss scaling, 224x224
at batch 256; both sides use channels_last, cuDNN autotuning and TF32 (which
orchestrate switches on by the device), and orchestrate's pipeline generates
the mock images on --workers threads. --compile adds the plain loop under
torch.compile (default mode), timed in the same alternation (its first step,
which compiles, is left out of the steady rate as orchestrate's is), and
--graph orchestrate with [run] cuda_graph = "auto" (the forward and backward
replayed as a CUDA graph) and data_on_device = "auto" (the mock split kept on
the GPU) beside its defaults, and --fused orchestrate with [model]
fuse_norm_relu = true (cuDNN's fused batch norm + add + ReLU) beside them.

Usage (from the repository root, after scripts/setup and a build):
  ~/.cache/orchestrate/venv-torch-2.11.0/bin/python scripts/bench/resnet18_vs_pytorch.py
      [--device cpu|cuda] [--config SIZE:BATCH:STEPS]... [--repeats 3] [--threads N] [--precision fp32|bf16|fp16]
      [--compile] [--graph] [--fused] [--set KEY=VALUE]... [--keep DIR]
"""
import argparse
import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
import machine  # noqa: E402

# About 3 minutes on an otherwise idle 2-core CPU. Runs of at least 11 steps
# leave their first step out (see common.time_plain_steps).
DEFAULTS = {
    "cpu": {"depth": 18, "precision": "fp32", "configs": ["64:32:24", "224:8:12"], "repeats": 3},
    "cuda": {"depth": 50, "precision": "fp16", "configs": ["224:256:60"], "repeats": 3},
}
LR = 0.01
MOMENTUM = 0.9
POOL = 512  # examples in the data set: the mock's train_size, the plain script's tensor


def parse_config(text):
    size, batch, steps = (int(part) for part in text.split(":"))
    return size, batch, steps


def recipe_text(args, size, batch, steps):
    # Everything the run does is spelled out, so this is what both sides do.
    return f"""schema_version = 1
[run]
name = "resnet{args.depth}_mock_{size}_b{batch}"
seed = 42
device = "{args.device}"
max_steps = {steps}
batch_size = {batch}
threads = {args.threads}
num_workers = {args.workers}
prefetch_batches = {max(4, args.workers + 2)}
[data]
plugin = "mock"
channels = 3
height = {size}
width = {size}
num_classes = {args.classes}
train_size = {POOL}
[model]
plugin = "resnet_v1"
depth = {args.depth}
memory_format = "auto"   # channels_last, as the plain script does on CUDA
[optimizer]
plugin = "momentum"
lr = {LR}
momentum = {MOMENTUM}
[precision]
mode = "{args.precision}"
[eval]
enabled = false
[checkpoint]
every_epochs = 0
at_end = false
[log]
progress = "never"
"""


def orchestrate_run(args, size, batch, steps, scratch, repeat, sets=()):
    recipe = os.path.join(scratch, f"resnet_{size}_{batch}.toml")
    with open(recipe, "w") as f:
        f.write(recipe_text(args, size, batch, steps))
    db = os.path.join(scratch, f"runs_{size}_{batch}_{repeat}_{len(sets)}.db")
    _, run_id = common.run_orchestrate(args.binary, recipe, db, [*args.set, *sets])
    return common.orchestrate_throughput(args.binary, db, run_id, batch * steps)


def mock_pool(size, classes, device):
    """Learnable synthetic images as the mock dataset makes them (a coarse
    prototype per class plus noise, clamped to [0, 1]), labels i % classes."""
    generator = torch.Generator().manual_seed(0)
    labels = torch.arange(POOL) % classes
    prototypes = torch.rand(classes, 3, 4, 4, generator=generator).mul_(0.6).add_(0.2)
    images = F.interpolate(prototypes, size=(size, size), mode="nearest")[labels]
    images.add_(torch.randn(images.shape, generator=generator), alpha=0.15).clamp_(0, 1)
    return images.to(device), labels.to(device)


def pytorch_baseline(args, size, batch, steps, compiled=False):
    """In a fresh process, as orchestrate's run is: a warm one would reuse the
    oneDNN primitives and allocator caches of the previous repeat, and the
    short 224x224 runs count their first step."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as process:
        return process.submit(pytorch_training, args, size, batch, steps, compiled).result()


def pytorch_training(args, size, batch, steps, compiled=False):
    torch.set_num_threads(args.threads)
    if args.device == "cuda":  # what orchestrate switches on for CUDA (core/engine/setup/compute_setup.cpp)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    device = torch.device(args.device)
    torch.manual_seed(42)
    model = getattr(torchvision.models, f"resnet{args.depth}")(num_classes=args.classes).to(device)
    channels_last = device.type == "cuda"
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    model.train()
    if compiled:  # torch.compile's default mode: its first step compiles, the steady rate leaves it out
        model = torch.compile(model)
    images, labels = mock_pool(size, args.classes, device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")

    def step(index):
        x = images[index]
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), labels[index])  # in fp32, as orchestrate's
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss.detach()

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    # Indices on the device beforehand: a blocking copy each step would wait for the GPU.
    batches = [indices.to(device) for indices in common.shuffled_batches(POOL, batch, steps)]
    return common.time_plain_steps(step, batches, batch, sync)


def describe_machine(device):
    text = machine.processor()
    if device == "cuda":
        text = f"{torch.cuda.get_device_name()}, " + text
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--config", action="append", metavar="SIZE:BATCH:STEPS",
                        help="image size, batch and steps; repeatable (default: 64:32:24 and 224:8:12 on the CPU, "
                             "224:256:60 on CUDA)")
    parser.add_argument("--depth", type=int, choices=[18, 34, 50, 101, 152],
                        help="ResNet depth (default: 18 on the CPU, 50 on CUDA)")
    parser.add_argument("--precision", choices=["fp32", "bf16", "fp16"],
                        help="fp32, or bf16/fp16 autocast (default: fp32 on the CPU, fp16 on CUDA)")
    parser.add_argument("--repeats", type=int, help="alternating repeats (default: 3)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="intra-op threads, both sides")
    parser.add_argument("--workers", type=int,
                        help="orchestrate's data pipeline threads (default: 0 on the CPU, all cores but two on "
                             "CUDA, where generating 256 mock images a step on one thread would starve the GPU)")
    parser.add_argument("--classes", type=int, default=1000, help="classes (ImageNet's 1000 by default)")
    parser.add_argument("--compile", action="store_true",
                        help="also time the plain loop under torch.compile (default mode), in the same alternation")
    parser.add_argument("--graph", action="store_true",
                        help="also time orchestrate with [run] cuda_graph and data_on_device = \"auto\", in the same "
                             "alternation")
    parser.add_argument("--fused", action="store_true",
                        help="also time orchestrate with [model] fuse_norm_relu = true (cuDNN's fused batch norm + "
                             "ReLU on CUDA fp16), in the same alternation")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a recipe override for orchestrate's runs")
    parser.add_argument("--binary", default="build/bin/orchestrate")
    parser.add_argument("--keep", metavar="DIR",
                        help="write orchestrate's recipes and run stores here and keep them (default: a temporary "
                             "directory, removed)")
    args = parser.parse_args()
    defaults = DEFAULTS[args.device]
    args.depth = args.depth or defaults["depth"]
    args.precision = args.precision or defaults["precision"]
    args.repeats = args.repeats or defaults["repeats"]
    if args.workers is None:
        args.workers = 0 if args.device == "cpu" else max(1, os.cpu_count() - 2)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device")
    configs = [parse_config(c) for c in (args.config or defaults["configs"])]

    print(f"ResNet-{args.depth}, {args.precision}, SGD momentum, on {args.device}: {describe_machine(args.device)}; "
          f"torch {torch.__version__}, torchvision {torchvision.__version__}, {args.threads} threads, "
          f"{args.repeats} alternating repeats", flush=True)
    # orchestrate beside its defaults, each in the same alternation: label -> its --set values.
    variant_sets = {}
    if args.graph:
        variant_sets["orchestrate, graph"] = ['run.cuda_graph="auto"', 'run.data_on_device="auto"']
    if args.fused:
        variant_sets["orchestrate, fused BN"] = ["model.fuse_norm_relu=true"]
    ratios = []
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.keep or temporary
        os.makedirs(scratch, exist_ok=True)
        for size, batch, steps in configs:
            print(f"\n{size}x{size} images, batch {batch}, {steps} steps", flush=True)
            ours, plain, compiled = [], [], []
            variants = {label: [] for label in variant_sets}
            for repeat in range(args.repeats):
                ours.append(orchestrate_run(args, size, batch, steps, scratch, repeat))
                for label, sets in list(variant_sets.items()):
                    try:
                        variants[label].append(orchestrate_run(args, size, batch, steps, scratch, repeat, sets))
                    except subprocess.CalledProcessError as error:  # the other sides' figures still count
                        print(f"  {label}: failed ({error}); left out from here", flush=True)
                        del variant_sets[label], variants[label]
                plain.append(pytorch_baseline(args, size, batch, steps))
                if args.compile:
                    try:
                        compiled.append(pytorch_baseline(args, size, batch, steps, compiled=True))
                    except Exception as error:  # noqa: BLE001 -- torch.compile's failures come in many types
                        print(f"  compiled: failed ({type(error).__name__}: {error}); left out from here", flush=True)
                        args.compile = False
                # Each repeat as it ends: a check cut short by its time limit keeps what it measured.
                figures = [("orchestrate", ours[-1]), *((label, v[-1]) for label, v in variants.items()),
                           ("eager", plain[-1]), *([("compiled", compiled[-1])] if args.compile else [])]
                each = ", ".join(f"{label} {r['images_per_s']:,.0f}" for label, r in figures)
                print(f"  repeat {repeat + 1}: {each} images/s", flush=True)
            ratios.append(common.print_comparison(ours, plain, f"torchvision resnet{args.depth}"))
            if args.compile:
                common.print_comparison(ours, compiled, f"resnet{args.depth} compiled")
            for label, results in variants.items():
                common.print_comparison(results, ours, "orchestrate, defaults", label)
                common.print_comparison(results, plain, f"torchvision resnet{args.depth}", label)
                if args.compile:
                    common.print_comparison(results, compiled, f"resnet{args.depth} compiled", label)
    print("\nratios orchestrate / PyTorch: " +
          ", ".join(f"{size}x{size} batch {batch}: {r:.2f}x" for (size, batch, _), r in zip(configs, ratios)))


if __name__ == "__main__":
    sys.exit(main())
