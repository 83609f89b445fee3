"""
Fast loops on the CPU, measured: f32 matmul (256, 1024, 2048) against numpy's BLAS, and
the convnet example (batch 8) against numpy and against mlc without `linalg-tile`.

Each system runs in this one process, alternating round by round; the medians and
their ratios are printed and appended to `bench/results/matmul.md` with the machine,
the versions and the date. numpy's BLAS uses every core, and so does mlc (its thread
pool follows `MLC_NUM_THREADS`, else the usable cores). Run it on a quiet machine:
`.venv/bin/python bench/matmul.py [rounds]`.
"""

import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

import mlc
from mlc import compiler, pipeline
from mlc.tiling_model import host, matmul_tiles, thread_count

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))
from run import EXAMPLES  # noqa: E402  (the examples' numpy references and inputs)

SIZES = (256, 1024, 2048)


def matmul_text(n: int) -> str:
    t = f"tensor<{n}x{n}xf32>"
    return f"""func.func @mm(%a: {t}, %b: {t}) -> {t} {{
      %c = ml.matmul %a, %b : ({t}, {t}) -> {t}
      func.return %c : {t}
    }}"""


def medians(contenders: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each contender, run alternately `rounds` times after a warm-up."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():
        fn()
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def compile_untiled(text: str) -> compiler.Executable:
    """`mlc.compile` with `linalg-tile` taken out of the loops stage."""
    saved = pipeline.STAGES["loops"]
    pipeline.STAGES["loops"] = saved.replace("linalg-tile,", "")
    try:
        return compiler.compile(text)  # the stage text is part of the key: compiled anew
    finally:
        pipeline.STAGES["loops"] = saved


def matmul_rows(rounds: int) -> list[str]:
    rng = np.random.default_rng(0)
    rows = [
        "| n | mlc GFLOP/s | numpy GFLOP/s | mlc / numpy | compile s |",
        "|---|---|---|---|---|",
    ]
    for n in SIZES:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        start = time.perf_counter()
        exe = mlc.compile(matmul_text(n))
        compile_s = time.perf_counter() - start
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-3, atol=1e-2 * np.sqrt(n))
        m = medians({"mlc": lambda: exe(a, b), "numpy": lambda: a @ b}, rounds)
        flops = 2 * n**3
        rows.append(
            f"| {n} | {flops / m['mlc'] / 1e9:.1f} | {flops / m['numpy'] / 1e9:.1f} "
            f"| {m['numpy'] / m['mlc']:.2f}x | {compile_s:.2f} |"
        )
    return rows


def convnet_rows(rounds: int) -> list[str]:
    reference, inputs = EXAMPLES["convnet.mlir"]
    args = inputs()
    text = (HERE.parent / "examples" / "convnet.mlir").read_text()
    tiled, untiled = mlc.compile(text), compile_untiled(text)
    want = reference(*args)
    for exe in (tiled, untiled):
        np.testing.assert_allclose(exe(*args), want, rtol=1e-3, atol=1e-3)
    m = medians(
        {
            "mlc": lambda: tiled(*args),
            "mlc without linalg-tile": lambda: untiled(*args),
            "numpy": lambda: reference(*args),
        },
        rounds,
    )
    rows = ["| convnet, batch 8 | median ms | vs mlc |", "|---|---|---|"]
    rows += [f"| {name} | {t * 1e3:.2f} | {t / m['mlc']:.2f}x |" for name, t in m.items()]
    return rows


def machine() -> str:
    cpu = llvm.get_host_cpu_name()
    model = platform.processor() or platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    tiles = matmul_tiles(4)
    return (
        f"{model} (LLVM cpu {cpu}, {host().vector_bits}-bit vectors, "
        f"{os.cpu_count()} cores, mlc threads {thread_count()}, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, load average "
        f"{os.getloadavg()[0]:.1f}); f32 tiles "
        f"MR={tiles.mr} NR={tiles.nr} KC={tiles.kc} MC={tiles.mc}; numpy {np.__version__}, "
        f"llvmlite {llvm.llvm_version_info}, python {platform.python_version()}"
    )


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    lines = [
        f"## Matmul and convnet ({date.today()})",
        "",
        f"Machine: {machine()}. Medians of {rounds} alternating rounds.",
        "",
        *matmul_rows(rounds),
        "",
        *convnet_rows(rounds),
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    (HERE / "results").mkdir(exist_ok=True)
    with open(HERE / "results" / "matmul.md", "a") as out:
        out.write(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
