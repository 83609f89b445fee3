"""
Where a GPU call of `examples/mlp.mlir` (batch 8192) spends its time, next to torch eager.

1. the GPU: each kernel's time from the CUDA profiler (torch.profiler's CUPTI trace,
   which sees mlc's kernels as well as torch's), over a few calls of each;
2. the host: the time until a call returns, medians of many calls, with the inputs
   already on the device (`GPUArray`s over torch's memory: the call returns without
   waiting for the GPU, as a torch op does) and as numpy arrays (copied in and the
   result copied out, so the call waits); torch likewise on tensors on the device and
   on CPU tensors moved there and back;
3. the Python functions of mlc's call path by own time (cProfile).

Run on a machine with a GPU: `python bench/gpu_profile.py [--out FILE]`.
"""

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

from gpu_setup import ROOT, Device, publish

import mlc


def host_us(torch, fn, calls: int = 200) -> float:
    """Median microseconds until `fn` returns (the GPU drained after each call)."""
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return statistics.median(times) * 1e6


def kernel_table(gpu: Device, fn, calls: int = 5) -> list[str]:
    """Each GPU kernel's count and mean microseconds over `calls` calls of `fn`."""
    rows, total = [], 0.0
    for event in gpu.kernels(fn, calls):
        device_us = getattr(event, "self_device_time_total", 0)
        if device_us <= 0:
            continue
        total += device_us / calls
        rows.append(
            (
                device_us / calls,
                f"| {event.key[:60]} | {event.count // calls} | "
                f"{device_us / event.count:.1f} | {device_us / calls:.1f} |",
            )
        )
    rows.sort(reverse=True)
    return [row for _, row in rows] + [f"| total per call | | | {total:.1f} |"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--out", type=Path, help="write a markdown report here")
    args = parser.parse_args()

    gpu = Device()
    torch, randn, view = gpu.torch, gpu.randn, gpu.view

    batch = 8192
    tensors = [
        randn(batch, 784),
        randn(784, 128) * 0.05,
        randn(128),
        randn(128, 10) * 0.1,
        randn(10),
    ]
    on_device = [view(t) for t in tensors]
    on_host = [t.cpu().numpy() for t in tensors]
    cpu_tensors = [t.cpu() for t in tensors]
    mlp = mlc.compile(str(ROOT / "examples/mlp.mlir"), target="cuda")

    def torch_mlp(x, w1, b1, w2, b2):
        return torch.softmax(torch.relu(x @ w1 + b1) @ w2 + b2, dim=-1)

    def torch_from_host():
        return torch_mlp(*(t.cuda() for t in cpu_tensors)).cpu()

    for _ in range(5):
        mlp(*on_device), mlp(*on_host), torch_mlp(*tensors), torch_from_host()
    lines = [gpu.versions(), "", "## GPU kernels per call", ""]
    for name, fn in (("mlc", lambda: mlp(*on_device)), ("torch", lambda: torch_mlp(*tensors))):
        lines += [
            f"### {name}",
            "",
            "| kernel | launches | us each | us per call |",
            "|---|---|---|---|",
            *kernel_table(gpu, fn),
            "",
        ]
    lines += [
        "## Host: microseconds until a call returns (median of 200)",
        "",
        "| inputs | mlc | torch |",
        "|---|---|---|",
    ]
    device_mlc = host_us(torch, lambda: mlp(*on_device))
    device_torch = host_us(torch, lambda: torch_mlp(*tensors))
    host_mlc = host_us(torch, lambda: mlp(*on_host))
    host_torch = host_us(torch, torch_from_host)
    lines += [
        f"| on the device (GPUArray / cuda tensor) | {device_mlc:.1f} | {device_torch:.1f} |",
        f"| numpy / CPU tensors, result back on the host | {host_mlc:.1f} | {host_torch:.1f} |",
        "",
    ]
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(500):
        mlp(*on_device)
    profiler.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
    lines += [
        "## mlc's call path, 500 calls on device inputs (cProfile, by own time)",
        "",
        "```",
        text.getvalue().strip(),
        "```",
    ]
    publish("\n".join(lines) + "\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
