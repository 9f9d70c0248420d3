#!/usr/bin/env python3
"""Where a training step's time goes, from a trace of the `profile` hook.

Reads the Chrome trace that `[[hooks]] plugin = "profile"` writes (LibTorch's
profiler, one ProfilerStep#N range per update) and sums the time of each kind
of work per update: convolutions, matrix products, batch norm, pooling,
element-wise ops (ReLU, residual adds, casts), the optimizer, the loss,
copies. On a CUDA trace it sums the GPU kernels, and says how much of the
traced span the GPU was busy and how many kernels an update launches: the
figures that tell a launch-bound step (capture it as a CUDA graph) from a
memory-bound one (fuse batch norm and ReLU into the convolution: issue 41,
item 3) from an arithmetic-bound one. On a CPU trace it sums the top-level
operators of the training thread.

Usage: scripts/bench/trace_breakdown.py TRACE.json [--top 8]
       (traces are in artifacts/<store file>/run-<id>/profiles/)
"""
import argparse
import json
import re
import sys
from collections import defaultdict

# Matched in order, on the kernel's or the operator's name: a cuDNN
# convolution kernel's name holds "gemm" as well, so convolutions come first.
KINDS = [
    # Not "xmma": cuBLAS's Hopper gemms are sm90_xmma_gemm_* too.
    ("convolution", re.compile(r"conv|implicit_gemm|dgrad|wgrad|fprop|cudnn::detail", re.I)),
    ("matrix product", re.compile(r"gemm|matmul|aten::mm$|addmm|linear|cutlass|cublas", re.I)),
    ("batch norm", re.compile(r"batch_norm|batchnorm|bn_fw|bn_bw|welford|cudnn::bn", re.I)),
    ("pooling", re.compile(r"pool", re.I)),
    # "lamb" but not the "{lambda()#3}" in most of ATen's kernel names.
    ("optimizer", re.compile(r"multi_tensor|fused_sgd|fused_adam|foreach|sgd|adam|lars|lamb(?!da)", re.I)),
    ("loss", re.compile(r"softmax|nll|cross_entropy", re.I)),
    ("copy", re.compile(r"memcpy|memset|copy_|to_copy|contiguous", re.I)),
    ("element-wise", re.compile(r"elementwise|relu|threshold|add|mul|div|clamp|fill|where|cast|sum|reduce", re.I)),
]


def kind_of(name):
    for kind, pattern in KINDS:
        if pattern.search(name):
            return kind
    return "other"


def top_level(events):
    """Operators not inside another operator of the same thread."""
    out = []
    by_thread = defaultdict(list)
    for e in events:
        by_thread[(e["pid"], e["tid"])].append(e)
    for thread_events in by_thread.values():
        thread_events.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
        open_until = -1.0
        for e in thread_events:
            if e["ts"] >= open_until:
                out.append(e)
                open_until = e["ts"] + e.get("dur", 0)
    return out


def busy_time(events):
    """The union of the events' intervals: time the device had work."""
    busy, end = 0.0, None
    for e in sorted(events, key=lambda e: e["ts"]):
        start, stop = e["ts"], e["ts"] + e.get("dur", 0)
        if end is None or start > end:
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    return busy


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=8, help="the longest kernels or operators to list")
    args = parser.parse_args()
    try:
        with open(args.trace) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        sys.exit(f"trace_breakdown: cannot read {args.trace}: {error}")
    events = data["traceEvents"] if isinstance(data, dict) else data
    complete = [e for e in events if e.get("ph") == "X" and "ts" in e]
    # The host's ranges only: on CUDA, Kineto also marks each step on the GPU's
    # timeline (gpu_user_annotation), which would count every update twice.
    steps = [e for e in complete if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")]
    updates = max(1, len(steps))
    kernels = [e for e in complete if e.get("cat") == "kernel"]
    on_gpu = bool(kernels)
    timed = kernels if on_gpu else top_level([e for e in complete if e.get("cat") == "cpu_op"])
    if not timed:
        sys.exit(f"trace_breakdown: {args.trace} holds no kernels and no operators")

    by_kind = defaultdict(float)
    by_name = defaultdict(float)
    for e in timed:
        by_kind[kind_of(e["name"])] += e.get("dur", 0)
        by_name[e["name"]] += e.get("dur", 0)
    total = sum(by_kind.values())
    where = "GPU kernels" if on_gpu else "top-level CPU operators"
    print(f"{args.trace}: {updates} update(s), {len(timed)} {where} ({len(timed) / updates:.0f} an update)")
    print(f"{'kind':<16}{'ms an update':>14}{'share':>8}")
    for kind, microseconds in sorted(by_kind.items(), key=lambda item: -item[1]):
        print(f"{kind:<16}{microseconds / 1e3 / updates:>14.3f}{100 * microseconds / total:>7.1f}%")
    print(f"{'all':<16}{total / 1e3 / updates:>14.3f}")
    if on_gpu:
        span = max(e["ts"] + e.get("dur", 0) for e in kernels) - min(e["ts"] for e in kernels)
        busy = busy_time(kernels)
        print(f"GPU busy {100 * busy / span:.1f} % of the {span / 1e3:.1f} ms from the first kernel to the last "
              f"(idle between kernels: {100 * (1 - busy / span):.1f} %)")
    if steps:
        step_ms = sorted(e["dur"] / 1e3 for e in steps)
        print(f"update as the host saw it: median {step_ms[len(step_ms) // 2]:.3f} ms")
    print(f"the {args.top} longest:")
    for name, microseconds in sorted(by_name.items(), key=lambda item: -item[1])[:args.top]:
        print(f"  {microseconds / 1e3 / updates:9.3f} ms  {kind_of(name):<15} {name[:90]}")


if __name__ == "__main__":
    main()
