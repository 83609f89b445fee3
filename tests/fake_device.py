"""
A stand-in for pycuda's `GPUArray` and a GPU program, to check on the CPU where the
`cuda` paths of `mlc.vjp` and `mlc.optim.training_step` keep their arrays.

`FakeDevice.install(monkeypatch, *modules)` makes `mlc.autodiff.device` copy into
`GPUArray`s that wrap numpy arrays, and each listed module's `compile_module` compile for
the CPU behind a wrapper that records what each call was given (host or device arrays)
and returns device arrays, as `mlc.backend.cuda` does for calls on `GPUArray`s.
"""

from typing import Any

import numpy as np

import mlc
from mlc.autodiff import device


class GPUArray:
    """Named as pycuda's, with a `gpudata`, so `is_device_array` takes it for one."""

    def __init__(self, array: Any):
        self.array = np.require(np.asarray(array), requirements="C")
        self.gpudata = id(self.array)

    shape = property(lambda self: self.array.shape)
    dtype = property(lambda self: self.array.dtype)
    nbytes = property(lambda self: self.array.nbytes)

    def get(self) -> np.ndarray:
        FakeDevice.copies_out += 1
        return self.array.copy()

    def __add__(self, other: "GPUArray") -> "GPUArray":
        return GPUArray(self.array + other.array)


class FakeDevice:
    copies_out = 0

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []  # function, kind of each argument
        self.copies_in = 0
        self.targets: list[str] = []  # the target of each compile

    def to_device(self, value: Any) -> GPUArray:
        if isinstance(value, GPUArray):
            return value
        self.copies_in += 1
        return GPUArray(value)

    def compile(self, module: Any, target: str, **options: Any) -> Any:
        """A CPU program; behind the device wrapper for `cuda`."""
        self.targets.append(target)
        executable = mlc.compile(module, **options)
        return FakeExecutable(executable, self) if target in ("cuda", "gpu") else executable

    def install(self, monkeypatch: Any, *modules: Any) -> "FakeDevice":
        FakeDevice.copies_out = 0
        monkeypatch.setattr(device, "to_device", self.to_device)
        monkeypatch.setattr(
            device,
            "zeros",
            lambda shape, dtype, on_gpu: (
                GPUArray(np.zeros(shape, dtype)) if on_gpu else np.zeros(shape, dtype)
            ),
        )
        for module in modules:
            monkeypatch.setattr(module, "compile_module", self.compile)
        return self


class FakeExecutable:
    def __init__(self, executable: Any, fake: FakeDevice):
        self.executable, self.fake = executable, fake

    def __getitem__(self, name: str) -> Any:
        return lambda *args: self._call(self.executable[name], name, args)

    def __call__(self, *args: Any) -> Any:
        return self._call(self.executable.entry, self.executable.entry.name, args)

    def _call(self, function: Any, name: str, args: tuple[Any, ...]) -> Any:
        kinds = ["device" if isinstance(a, GPUArray) else "host" for a in args]
        self.fake.calls.append((name, kinds))
        result = function(*(a.array if isinstance(a, GPUArray) else a for a in args))
        inputs = {id(a.array): a for a in args if isinstance(a, GPUArray)}

        def on_device(r: Any) -> GPUArray:  # a donated argument comes back as itself
            return inputs.get(id(r)) or GPUArray(r)

        if isinstance(result, tuple):
            return tuple(on_device(r) for r in result)
        return on_device(result)
