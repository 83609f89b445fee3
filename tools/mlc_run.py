"""
mlc-run: compile a program for the CPU, run one function, and report what came out.

    mlc-run model.mlir x.npy w.npy                 # inputs from .npy files
    mlc-run model.mlir --random --seed 1           # random inputs of the signature's types
    mlc-run model.mlir --random --dim 8 --shape x=2x16 --repeat 20 --save out.npz
    mlc-run bert.onnx --random --int-range 0,1         # token ids within their tables

Each result is printed as one line (shape, dtype, sum and its first values) so runs can
be compared at a glance, then the compile time and the median time of `--repeat` calls.
Arguments are checked against the function's signature by `mlc.compile`'s executable
before any native code runs; a mismatch is a one-line error.

Errors follow mlc-opt's conventions: diagnostics on stderr, exit status 1, no traceback
unless `--debug`, and `--save` is written only on success. A bad command line is
argparse's usage error (exit status 2).
"""

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mlc.tools.mlc_opt import UsageError, guarded, read_input, report
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute

import mlc
from mlc import input_ranges
from mlc.backend.cuda import CudaUnavailableError
from mlc.backend.runtime import dtype_of
from mlc.compiler import CompiledFunction
from mlc.compiler.options import PRECISIONS
from mlc.compiler.source import load
from mlc.compiler.specialization import SpecializingFunction
from mlc.profiler import command_line as profiling

PROG = "mlc-run"
SHOWN_VALUES = 4  # how many leading values each result line shows

EPILOG = """\
random inputs (--random): floats uniform in [-1, 1), integers in [-10, 10] (--int-range
LO,HI: in [LO, HI]) and within their type, booleans fair. An integer input whose range
the program knows is drawn from it (and from LO..HI where the two overlap): the indices
of an ml.gather (an ONNX Gather, an embedding) in [0, rows), the mask of an ml.select
in {0, 1} (see mlc/input_ranges.py). Each dynamic dimension ('?') takes the size --dim
(default 4). --shape ARG=DIMS gives one argument its whole shape instead, ARG being its
position (0, 1, ...) or its name (x for %x) and DIMS sizes joined by 'x' (e.g. --shape
x=2x3; --shape 0= for rank 0).
"""

DEFAULT_INTS = range(-10, 11)


def shape_override(text: str) -> tuple[str, tuple[int, ...]]:
    """`ARG=DIMS` from the command line, as (ARG, sizes)."""
    arg, sep, dims = text.partition("=")
    try:
        if not sep or not arg:
            raise ValueError
        sizes = tuple(int(d) for d in dims.split("x")) if dims else ()
        if any(size < 0 for size in sizes):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ARG=DIMS such as x=2x3, got '{text}'") from None
    return arg.removeprefix("%"), sizes


def int_range(text: str) -> range:
    """`LO,HI` from the command line, as the range of integers LO..HI (both included)."""
    lo, sep, hi = text.partition(",")
    try:
        bounds = (int(lo), int(hi)) if sep else None
    except ValueError:
        bounds = None
    if bounds is None or bounds[0] > bounds[1]:
        raise argparse.ArgumentTypeError(f"expected LO,HI with integers LO <= HI, got '{text}'")
    return range(bounds[0], bounds[1] + 1)


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer no smaller than `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got '{text}'")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="compile a .mlir (or .onnx) program for the CPU and run one function",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("program", help="the program to compile (.mlir, .onnx)")
    p.add_argument("inputs", nargs="*", metavar="INPUT.npy", help="one .npy file per argument")
    p.add_argument("--entry", help="the function to run (default: main, else the only one)")
    p.add_argument("--random", action="store_true", help="run on random inputs (see below)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    p.add_argument("--dim", type=at_least(0), default=4, help="size of dynamic dims (default: 4)")
    p.add_argument(
        "--int-range",
        type=int_range,
        default=DEFAULT_INTS,
        metavar="LO,HI",
        help="draw random integers in [LO, HI] (default: -10,10; --int-range=-5,5 for LO < 0)",
    )
    p.add_argument(
        "--shape",
        type=shape_override,
        action="append",
        default=[],
        metavar="ARG=DIMS",
        help="shape of one random argument, e.g. x=2x3 or 0=2x3 (repeatable)",
    )
    p.add_argument("--save", metavar="OUT.npz", help="save the results as result0, result1, ...")
    p.add_argument(
        "--repeat",
        type=at_least(1),
        default=1,
        metavar="N",
        help="time the median of N runs (default: 1)",
    )
    p.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="f32",
        help="run matmuls and convolutions in this precision (default: f32; see mlc.compile)",
    )
    p.add_argument(
        "--autotune",
        action="store_true",
        help="block matmuls and convolutions as measured on this machine (see mlc.compile)",
    )
    p.add_argument(
        "--specialize",
        action="store_true",
        help="run a static build for the inputs' shapes, compiled (and cached) on first use "
        "(see mlc.compile)",
    )
    p.add_argument(
        "--specialize-after",
        type=at_least(1),
        metavar="N",
        help="with --specialize: compile the static build at the N-th run (default: 1)",
    )
    p.add_argument(
        "--target",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where to run: the CPU, or the first NVIDIA GPU (default: cpu)",
    )
    p.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    profiling.add_arguments(p)
    return p


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def load_npy(path: str) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except OSError as error:
        raise UsageError(f"cannot read '{path}': {error.strerror or error}") from None
    except ValueError:  # numpy's reason (e.g. "pickled data") misleads for a wrong file
        raise UsageError(f"'{path}' is not a .npy file") from None
    if not isinstance(array, np.ndarray):  # an .npz archive
        raise UsageError(f"'{path}' is not a .npy file (an .npz archive?)")
    return array


def random_array(
    shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator, ints: range = DEFAULT_INTS
) -> np.ndarray:
    """Random values of `dtype`: integers from `ints` (a range of step 1), see EPILOG."""
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(ints.start, ints.stop, size=shape).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def integers_for(dtype: np.dtype, asked: range, known: range | None, what: str) -> range:
    """The integers an input of `dtype` is drawn from: `known` (within `asked` if they meet)."""
    if not np.issubdtype(dtype, np.integer):
        return asked
    info = np.iinfo(dtype)
    drawn = input_ranges.intersection(known, asked) if known is not None else asked
    fitting = range(max(drawn.start, int(info.min)), min(drawn.stop, int(info.max) + 1))
    if not fitting:
        shown = f"{drawn.start},{drawn.stop - 1}"
        raise UsageError(f"--int-range: no value of {shown} fits {what} ({dtype})")
    return fitting


def random_inputs(
    function: CompiledFunction, args: argparse.Namespace, known: dict[int, range]
) -> list[Any]:
    """
    One random value per argument of `function`, shaped by `--dim` and `--shape`, integers
    from `--int-range` or the range `known` for their position.
    """
    signature = function.signature
    overrides = {arg_index(signature.arg_names, key): sizes for key, sizes in args.shape}
    rng = np.random.default_rng(args.seed)
    values: list[Any] = []
    for i, type_ in enumerate(signature.inputs):
        dtype = element_dtype(type_)
        ints = integers_for(
            dtype, args.int_range, known.get(i), f"argument {i} of @{signature.name}"
        )
        if not isinstance(type_, TensorType):
            if i in overrides:
                raise UsageError(f"--shape: argument {i} of @{signature.name} is a scalar")
            values.append(random_array((), dtype, rng, ints)[()])
            continue
        dims = tuple(args.dim if d == DYNAMIC_INDEX else d for d in type_.get_shape())
        values.append(random_array(overrides.get(i, dims), dtype, rng, ints))
    return values


def known_ranges(path: str, function: str) -> dict[int, range]:
    """The ranges the program requires of `function`'s integer arguments (input_ranges)."""
    return input_ranges.function_ranges(load(Path(path)), function)


def element_dtype(type_: Attribute) -> np.dtype:
    element = type_.element_type if isinstance(type_, TensorType) else type_
    try:
        return dtype_of(element)
    except TypeError as error:
        raise UsageError(f"cannot make a random input: {error}") from None


def arg_index(arg_names: Sequence[str], key: str) -> int:
    """The position of the argument `--shape` names by position or by name."""
    if key.isdigit() and int(key) < len(arg_names):
        return int(key)
    if f"%{key}" in arg_names:
        return arg_names.index(f"%{key}")
    names = ", ".join(arg_names) or "none"
    raise UsageError(f"--shape: no argument '{key}' (arguments: {names})")


def scalars_unwrapped(function: CompiledFunction, values: list[Any]) -> list[Any]:
    """Rank-0 .npy inputs for scalar arguments, as the scalars the signature takes."""
    unwrapped = list(values)
    for i, type_ in enumerate(function.signature.inputs[: len(values)]):
        value = values[i]
        if not isinstance(type_, TensorType) and isinstance(value, np.ndarray) and not value.ndim:
            unwrapped[i] = value[()]
    return unwrapped


# ---------------------------------------------------------------------------
# Compiling, running, reporting
# ---------------------------------------------------------------------------


def compile_program(
    path: str,
    precision: str = "f32",
    target: str = "cpu",
    autotune: bool | None = None,
    specialize: bool | None = None,
    specialize_after: int | None = None,
) -> tuple[Any, float]:
    """The executable for `path` and the seconds it took; reports diagnostics itself."""
    if path.endswith(".onnx"):
        try:
            Path(path).open("rb").close()
        except OSError as error:
            raise UsageError(f"cannot read '{path}': {error.strerror}") from None
        sources = {}
    else:
        text, _ = read_input(path)
        sources = {path: text}
    start = time.perf_counter()
    try:
        executable = mlc.compile(
            Path(path),
            precision=precision,
            target=target,
            autotune=autotune,
            specialize=specialize,
            specialize_after=specialize_after,
        )
    except mlc.CompileError as error:
        report(error.diagnostics, sources)
        raise Failed from None
    except CudaUnavailableError as error:
        raise UsageError(str(error)) from None
    return executable, time.perf_counter() - start


class Failed(Exception):
    """The error has been reported already; exit with status 1."""


def entry_function(executable: Any, name: str | None) -> CompiledFunction:
    """`--entry`'s function, else `main`, else the only public function."""
    functions: dict[str, CompiledFunction] = executable.functions
    if name is None:
        name = "main" if "main" in functions or len(functions) != 1 else next(iter(functions))
    if name not in functions:
        names = ", ".join(f"@{n}" for n in functions) or "none"
        hint = "" if name != "main" or not functions else "; choose one with --entry"
        raise UsageError(f"no public function @{name} (functions: {names}){hint}")
    return functions[name]


def specializing(args: argparse.Namespace) -> tuple[bool | None, int | None]:
    """`mlc.compile`'s `specialize` and `specialize_after` as the flags ask (None: as
    the environment says)."""
    if args.specialize_after is not None and not args.specialize:
        raise UsageError("--specialize-after needs --specialize")
    return args.specialize or None, args.specialize_after


def specialized_runs(function: CompiledFunction, asked: bool) -> list[str]:
    """With `--specialize`, a line saying how many runs its static build made (a
    function without dynamic input dims has none to make: it is static already)."""
    if not asked:
        return []
    if not isinstance(function, SpecializingFunction):
        return ["specialize: the function's inputs have static shapes already\n"]
    info = function.cache_info()
    return [f"specialize: {info.hits} of {info.hits + info.misses} runs on a static build\n"]


def describe(index: int, value: Any) -> str:
    """One line per result: shape, dtype and a checksum (the sum, then leading values)."""
    array = np.asarray(value)
    exact = array.dtype == np.bool_ or np.issubdtype(array.dtype, np.integer)
    total = int(array.sum(dtype=np.int64)) if exact else float(array.sum(dtype=np.float64))
    values = [number(v) for v in array.reshape(-1)[:SHOWN_VALUES].tolist()]
    first = ", ".join([*values, "..."] if array.size > SHOWN_VALUES else values)
    return (
        f"result{index}: shape={array.shape} dtype={array.dtype} "
        f"sum={number(total)} first=[{first}]"
    )


def number(value: bool | int | float) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def as_results(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, tuple) else [value]


def save(path: str, results: Sequence[Any]) -> None:
    """Write the results to an .npz; built in memory first, so no half-written file."""
    buffer = io.BytesIO()
    np.savez(buffer, **{f"result{i}": np.asarray(r) for i, r in enumerate(results)})
    try:
        Path(path).write_bytes(buffer.getvalue())
    except OSError as error:
        raise UsageError(f"cannot write '{path}': {error.strerror}") from None


def run(args: argparse.Namespace) -> int:
    if args.random and args.inputs:
        raise UsageError("give either INPUT.npy files or --random, not both")
    if (problem := profiling.check(args)) is not None:
        raise UsageError(problem)
    executable, compile_seconds = compile_program(
        args.program, args.precision, args.target, args.autotune or None, *specializing(args)
    )
    function = entry_function(executable, args.entry)
    if args.random:
        inputs = random_inputs(function, args, known_ranges(args.program, function.name))
    else:
        inputs = scalars_unwrapped(function, [load_npy(p) for p in args.inputs])
    try:
        function.signature.check(inputs)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None
    if args.profile:
        results = profiling.run(args, executable, function.name, inputs).outputs
        if args.save is not None:
            save(args.save, as_results(results))
        return 0
    times: list[float] = []
    results: Any = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        results = function(*inputs)
        times.append(time.perf_counter() - start)
    outputs = as_results(results)
    for i, value in enumerate(outputs):
        print(describe(i, value))
    print(f"compile: {compile_seconds * 1e3:.1f} ms")
    print(f"run: {statistics.median(times) * 1e3:.3f} ms (median of {args.repeat})")
    print(*specialized_runs(function, args.specialize), sep="", end="")
    if args.save is not None:
        save(args.save, outputs)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    def body(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except Failed:
            return 1

    return guarded(PROG, build_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
