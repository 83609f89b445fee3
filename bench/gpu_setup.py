"""
What the GPU benchmarks (`gpu.py`, `gpu_profile.py`, `gpu_tiles.py`) share: torch set
up as the reference (TF32 off, its context the primary one mlc uses), seeded random
tensors on the device, pycuda views of them for mlc (no copies), the CUDA
profiler's kernel times and the report's end (device and versions).
"""

import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class Device:
    """torch on the GPU, ready to make inputs: `randn(*shape)`, `view(tensor)`."""

    def __init__(self, seed: int = 0):
        from mlc.extras import require

        # torch makes the inputs and is the reference: a one-line error naming the extra
        torch: Any = require("torch", "the GPU benchmark")
        require("pycuda", "the GPU benchmark")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # torch's context is the primary one mlc uses too
        self.torch = torch
        self.generator = torch.Generator(device="cuda").manual_seed(seed)

    def randn(self, *shape: int) -> Any:
        return self.torch.randn(
            *shape, device="cuda", generator=self.generator, dtype=self.torch.float32
        )

    @staticmethod
    def view(tensor: Any) -> Any:
        """A pycuda `GPUArray` over a contiguous f32 torch tensor's memory."""
        from pycuda.gpuarray import GPUArray  # pyright: ignore[reportMissingImports]

        return GPUArray(tuple(tensor.shape), np.float32, gpudata=tensor.data_ptr())

    def kernels(self, fn, calls: int) -> Any:
        """The CUDA profiler's averages over `calls` calls of `fn` (after a warm-up)."""
        from torch.profiler import ProfilerActivity, profile

        for _ in range(3):
            fn()
        self.torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            self.torch.cuda.synchronize()
        return prof.key_averages()

    def kernel_us(self, fn, calls: int) -> float:
        """Microseconds of GPU kernels per call of `fn`: host work does not count."""
        events = self.kernels(fn, calls)
        return sum(getattr(e, "self_device_time_total", 0) for e in events) / calls

    def versions(self) -> str:
        """The device, date and software versions, as a report's lines."""
        from importlib import metadata

        import llvmlite
        import llvmlite.binding
        import pycuda  # pyright: ignore[reportMissingImports]
        import pycuda.driver  # pyright: ignore[reportMissingImports]

        from mlc.backend import cuda

        torch = self.torch
        properties = torch.cuda.get_device_properties(0)
        llvm_version = ".".join(map(str, llvmlite.binding.llvm_version_info[:2]))
        driver_api = pycuda.driver.get_driver_version()
        return "\n".join(
            [
                f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
                f"- device: {properties.name} ({cuda.device().sm}), compute capability "
                f"{properties.major}.{properties.minor}",
                f"- versions: python {platform.python_version()}, torch {torch.__version__}, "
                f"llvmlite {llvmlite.__version__} (LLVM {llvm_version}), "
                f"pycuda {pycuda.VERSION_TEXT}, xDSL {metadata.version('xdsl')}, "
                f"CUDA driver API {driver_api // 1000}.{driver_api % 1000 // 10}",
            ]
        )


def publish(report: str, out: Path | None) -> None:
    """Print the report, and write it to `out` when given."""
    print(report)
    if out is not None:
        out.write_text(report)
