"""
Where `mlc.vjp`'s arrays live on the `cuda` target: on the device, as pycuda `GPUArray`s.

The forward half runs on device arrays (a numpy primal is copied in once), so its
residuals come back as `GPUArray`s and stay on the device for the backward; only what
the caller sees (outputs, gradients) is copied out, and only when the caller passed
numpy arrays. pycuda is imported on first use, as `mlc.backend.cuda` does.
"""

from typing import Any

import numpy as np

from mlc.backend.cuda import device, is_device_array, upload


def on_device(target: str) -> bool:
    """Whether a program compiled for `target` runs on the GPU (its arrays live there)."""
    return target in ("cuda", "gpu")


def to_device(value: Any) -> Any:
    """`value` as a `GPUArray` (copied in unless it is one)."""
    return value if is_device_array(value) else upload(value)


def to_host(value: Any) -> Any:
    """`value` as a numpy array (copied out if it is a `GPUArray`)."""
    return value.get() if is_device_array(value) else value


def zeros(shape: tuple[int, ...], dtype: Any, on_gpu: bool) -> Any:
    """Zeros of `shape` and `dtype`, on the device or the host."""
    if not on_gpu:
        return np.zeros(shape, dtype)
    device()
    from pycuda import gpuarray  # pyright: ignore[reportMissingImports]

    return gpuarray.zeros(shape, dtype)


def host_like(value: Any) -> np.ndarray:
    """`value` if it is a numpy array, else an uninitialised one of its shape and dtype
    (what tracing needs: no copy out)."""
    return np.empty(value.shape, value.dtype) if is_device_array(value) else value
