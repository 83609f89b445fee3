"""
The systems the CPU benchmarks compare, each behind one small adapter.

`prepare_<system>(...)` compiles (or loads) a workload and returns a `Prepared`: a
zero-argument `run` that does one call on inputs bound beforehand, a `result` that
fetches the last output for the correctness check, and the compile time. A system
that cannot run a workload raises `Missing` with the reason, which the table prints
in place of a number, so no gap is silent.

Output buffers: numpy and onnxruntime (through I/O binding) write into buffers
allocated once; mlc and IREE allocate their results on every call (mlc has no
`out=` API; IREE's Python runtime returns new device arrays).
"""

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ALLOCATES_PER_CALL = {"mlc": True, "numpy": False, "onnxruntime": False, "IREE": True}


class Missing(Exception):
    """This system cannot run this workload here; the message says why."""


@dataclass
class Prepared:
    run: Callable[[], object]
    result: Callable[[], Any]
    compile_s: float | None = None
    cached_compile_s: float | None = None


def _timed(make: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    made = make()
    return made, time.perf_counter() - start


# --- numpy -------------------------------------------------------------------------


def prepare_numpy(factory: Callable[..., Callable[[], Any]], args: Sequence[Any]) -> Prepared:
    """A numpy version: `factory(*args)` binds the inputs (and allocates any output buffers)."""
    call = factory(*args)
    last: list[Any] = [None]

    def run() -> None:
        last[0] = call()

    run()
    return Prepared(run, lambda: last[0])


# --- mlc ---------------------------------------------------------------------------


def prepare_mlc(src: Any, args: Sequence[Any]) -> Prepared:
    """
    Compile `src` with `mlc.compile`: cold (the disk cache moved to a fresh folder)
    and then again as a new process would (in-memory cache cleared, disk cache hit).
    """
    import tempfile

    import mlc
    from mlc.compiler import executable_cache

    saved = os.environ.get("MLC_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="mlc-bench-cache-") as folder:
        os.environ["MLC_CACHE_DIR"] = folder
        try:
            executable_cache.clear()
            exe, cold = _timed(lambda: mlc.compile(src))
            executable_cache.clear()
            cached_exe, cached = _timed(lambda: mlc.compile(src))
            if not cached_exe.from_cache:
                cached = None  # the cache is off (MLC_CACHE=0): nothing to report
        except mlc.CompileError as error:
            raise Missing(f"mlc cannot compile it: {str(error).splitlines()[0]}") from None
        finally:
            if saved is None:
                del os.environ["MLC_CACHE_DIR"]
            else:
                os.environ["MLC_CACHE_DIR"] = saved
    last: list[Any] = [None]

    def run() -> None:
        last[0] = exe(*args)

    run()
    return Prepared(run, lambda: last[0], cold, cached)


# --- onnxruntime -------------------------------------------------------------------


def prepare_onnxruntime(model: Any, args: Sequence[np.ndarray]) -> Prepared:
    """An ONNX model in onnxruntime (default threads), outputs bound to preallocated buffers."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise Missing("onnxruntime is not installed (make bench installs it)") from None
    options = ort.SessionOptions()
    options.log_severity_level = 3
    # Idle worker threads spinning between calls would steal the cores from the system
    # timed next: they sleep instead (the thread count stays onnxruntime's default).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session, seconds = _timed(
        lambda: ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    )
    feeds = {i.name: a for i, a in zip(session.get_inputs(), args, strict=True)}
    first = session.run(None, feeds)  # the output shapes, and a warm-up
    binding = session.io_binding()
    for name, array in feeds.items():
        binding.bind_cpu_input(name, array)
    outputs = [np.empty_like(o) for o in first]
    for info, out in zip(session.get_outputs(), outputs, strict=True):
        binding.bind_output(info.name, "cpu", 0, out.dtype, out.shape, out.ctypes.data)

    def run() -> None:
        session.run_with_iobinding(binding)

    run()
    return Prepared(run, lambda: outputs[0] if len(outputs) == 1 else tuple(outputs), seconds)


# --- IREE --------------------------------------------------------------------------

IREE_FLAGS = ["--iree-llvmcpu-target-cpu=host"]


def _iree() -> tuple[Any, Any]:
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
    except ImportError:
        raise Missing(
            "IREE is not installed (iree-base-compiler / iree-base-runtime: make bench)"
        ) from None
    return compiler, runtime


def iree_text_from_onnx(model: Any) -> str:
    """The torch-dialect MLIR that IREE's ONNX importer makes of `model`."""
    _iree()
    try:
        from iree.compiler import ir
        from iree.compiler.extras import onnx_importer
    except ImportError as error:
        raise Missing(f"IREE's ONNX importer is unavailable: {error}") from None
    from onnx import shape_inference

    # The importer needs every value's type, as `iree-import-onnx` gets them.
    info = onnx_importer.ModelInfo(shape_inference.infer_shapes(model, data_prop=True))
    module = info.create_module(context=ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    return module.get_asm()


def prepare_iree(text: str, args: Sequence[np.ndarray], input_type: str = "auto") -> Prepared:
    """MLIR text compiled by IREE for `llvm-cpu` on the host CPU, run on `local-task`."""
    compiler, runtime = _iree()
    try:
        vmfb, seconds = _timed(
            lambda: compiler.compile_str(
                text,
                target_backends=["llvm-cpu"],
                input_type=input_type,
                extra_args=IREE_FLAGS,
            )
        )
    except compiler.CompilerToolError as error:
        lines = [line for line in str(error).splitlines() if "error" in line] or ["failed"]
        raise Missing(f"IREE cannot compile it: {lines[0].strip()[:160]}") from None
    module, load_s = _timed(lambda: runtime.load_vm_flatbuffer(vmfb, driver="local-task"))
    device = runtime.get_device("local-task")
    inputs = [runtime.asdevicearray(device, a) for a in args]
    function = _entry(module)
    last: list[Any] = [None]

    def run() -> None:
        last[0] = function(*inputs)

    def result() -> Any:
        out = last[0]
        if isinstance(out, tuple | list):
            return tuple(np.asarray(o.to_host()) for o in out)
        return np.asarray(out.to_host())

    run()
    return Prepared(run, result, seconds, load_s)


def _entry(module: Any) -> Any:
    """`main`, else the module's only public function."""
    names = [n for n in module.vm_module.function_names if not n.startswith("__")]
    names = [n for n in names if not n.endswith("$async")]  # IREE's async twin of each
    if "main" in names:
        return module["main"]
    if len(names) != 1:
        raise Missing(f"the IREE module has no single entry function ({', '.join(names)})")
    return module[names[0]]
