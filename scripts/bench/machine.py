"""What a benchmark names beside its figures: the processor and the load
average. Free of torch, so every benchmark (and the system python3) can use it."""
import os


def processor():
    """The model name, family and model, and whether it has AVX-512, from /proc/cpuinfo."""
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if ":" in line:
                key, value = (part.strip() for part in line.split(":", 1))
                info.setdefault(key, value)
    avx512 = "avx512f" in info.get("flags", "").split()
    return (f"{info.get('model name', 'unknown')} (family {info.get('cpu family', '?')} model "
            f"{info.get('model', '?')}, {'with' if avx512 else 'no'} AVX-512), {os.cpu_count()} cores")


def load_average():
    return os.getloadavg()[0]
