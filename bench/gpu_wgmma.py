"""
16-bit and tf32 matmuls on an H100 or H200: the mma.sync kernel and the sm_90a wgmma
kernel's tile shapes side by side, against cuBLAS (torch), in one process.

Each variant compiles with `MLC_WGMMA=off` (mma.sync) or `MLC_WGMMA=ROWS,COLS,STAGES`
(the wgmma kernel with that tile, its operands copied by TMA from a producer
warpgroup, `wgmma_tma`; `ROWS,COLS,STAGES,cp.async`: by every thread's cp.async).
tf32 rows are f32 matmuls compiled with `allow_tf32=True` against torch with
`torch.backends.cuda.matmul.allow_tf32 = True`.
First the numerics: every variant on odd static shapes (edge tiles in M, N and K; a
transposed B; a batch of 3) against float64 of the same inputs, relative L2 error and whether every
element is within 2 units in the last place of the output type (of the largest
output; tf32: within 3 * 2^-10 of |a| @ |b|); a variant that fails is not
timed. Then the times: square matmuls (4096 and 8192 by default; `--batch N`: N of
them in one batched matmul) by their GPU kernel time per call (the CUDA profiler: host
work does not count) against `a @ b` in torch, and the kernel the PTX holds (wgmma,
wgmma+tma or mma.sync). The table comes last.

Run on the GPU machine: `python bench/gpu_wgmma.py [--sizes 4096 8192] [--out FILE]
[--element tf32] [--batch 8] [--variant off] [--variant 128,256,4 ...]`.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from gpu_setup import Device, publish

import mlc
from mlc import pipeline
from mlc.backend.ptx import to_ptx

# "off": the mma.sync kernel; else the wgmma kernel's rows, cols, stages
VARIANTS = [
    "off", "128,256,4", "128,256,4,cp.async", "128,256,3", "128,128,4", "192,192,3", "64,256,4"
]  # fmt: skip
ULP = {"f16": 2.0**-10, "bf16": 2.0**-7, "tf32": 2.0**-10}
# f32 with allow_tf32: mma.sync or wgmma (by TMA, or by cp.async)
TF32_VARIANTS = ["off", "128,256,4", "128,256,4,cp.async", "128,128,4"]

MATMUL = """
func.func @main(%a: tensor<MxKxT>, %b: tensor<KxNxT>) -> tensor<MxNxT> {
  %c = ml.matmul %a, %b : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  func.return %c : tensor<MxNxT>
}
"""
A_BT = """
func.func @main(%a: tensor<MxKxT>, %b: tensor<NxKxT>) -> tensor<MxNxT> {
  %bt = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<NxKxT>) -> tensor<KxNxT>
  %c = ml.matmul %a, %bt : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  func.return %c : tensor<MxNxT>
}
"""
BATCHED = """
func.func @main(%a: tensor<BxMxKxT>, %b: tensor<BxKxNxT>) -> tensor<BxMxNxT> {
  %c = ml.matmul %a, %b : (tensor<BxMxKxT>, tensor<BxKxNxT>) -> tensor<BxMxNxT>
  func.return %c : tensor<BxMxNxT>
}
"""
# (program, M, K, N, batch)
ODD = [
    (MATMUL, 1000, 520, 1000, 1), (MATMUL, 456, 72, 2056, 1), (A_BT, 1096, 200, 392, 1),
    (BATCHED, 200, 136, 264, 3),
]  # fmt: skip


def source(program: str, element: str, m: int, k: int, n: int, batch: int = 1) -> str:
    text = program.replace("<Bx", f"<{batch}x").replace("xMx", f"x{m}x")
    text = text.replace("<M", f"<{m}").replace("xKx", f"x{k}x").replace("<K", f"<{k}")
    text = text.replace("xNx", f"x{n}x").replace("<N", f"<{n}")
    return text.replace("xT>", f"x{'f32' if element == 'tf32' else element}>")


def compile_variant(text: str, variant: str, sm: str, element: str):
    """The executable and the kernel its PTX multiplies with (`MLC_WGMMA`: the variant)."""
    options = {"allow_tf32": True} if element == "tf32" else {}
    os.environ[pipeline.WGMMA_VARIABLE] = "off" if variant == "off" else variant
    try:
        exe = mlc.compile(text, target="cuda", **options)
        ptx = to_ptx(mlc.compile(text, target="cuda", emit="nvvm", sm=sm, **options), sm)
    finally:
        del os.environ[pipeline.WGMMA_VARIABLE]
    kernel = "wgmma" if "wgmma.mma_async" in ptx else "mma.sync" if "mma.sync" in ptx else "?"
    if kernel == "wgmma" and "cp.async.bulk.tensor" in ptx:
        kernel = "wgmma+tma"
    return exe, kernel


def label(variant: str) -> str:
    """`off`, or `ROWS,COLS,STAGES[,tma|,cp.async]` as the table names it."""
    if variant == "off":
        return "mma.sync 128x128/4"
    rows, cols, stages, *feed = variant.split(",")
    return f"wgmma {rows}x{cols}/{stages}" + "".join(f"/{f}" for f in feed)


def check(variant: str, element: str, dtype, sm: str) -> tuple[bool, str]:
    """Every odd shape within 2 ulp of the output type (tf32: within 3 * 2^-10 of
    |a| @ |b|, tf32's rounding of the products); the worst relative L2 error."""
    rng = np.random.default_rng()
    worst, ok, kernels = 0.0, True, set()
    for program, m, k, n, batch in ODD:
        text = source(program, element, m, k, n, batch)
        exe, kernel = compile_variant(text, variant, sm, element)
        kernels.add(kernel)
        outer = (batch,) if program is BATCHED else ()
        a = rng.standard_normal((*outer, m, k)).astype(dtype)
        b = rng.standard_normal((n, k) if program is A_BT else (*outer, k, n)).astype(dtype)
        want = a.astype(np.float64) @ (b.T if program is A_BT else b).astype(np.float64)
        got = np.asarray(exe(a, b)).astype(np.float64)
        worst = max(worst, float(np.linalg.norm(got - want) / np.linalg.norm(want)))
        scale = max(1.0, float(np.abs(want).max()))
        limit = 2 * ULP[element] * (scale + np.abs(want))
        if element == "tf32":
            magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.T if program is A_BT else b)
            limit = 3 * ULP[element] * magnitude + 1e-6
        ok = ok and bool((np.abs(got - want) <= limit).all())
    return ok, f"{worst:.1e} ({'/'.join(sorted(kernels))}, {'ok' if ok else 'FAILED'})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--out", type=Path, help="write a markdown table here")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--calls", type=int, default=10, help="profiled calls a time")
    parser.add_argument("--batch", type=int, default=1, help="square matmuls a call")
    parser.add_argument(
        "--variant", action="append", metavar="off|ROWS,COLS,STAGES[,tma|,cp.async]",
        help="a variant instead of the built-in list (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--element", action="append", choices=["bf16", "f16", "tf32"],
        help="only these element types (repeatable; default: all three)",
    )  # fmt: skip
    args = parser.parse_args()

    import ml_dtypes
    from pycuda.gpuarray import GPUArray  # pyright: ignore[reportMissingImports]

    from mlc.backend import cuda

    gpu = Device()
    torch, sm = gpu.torch, cuda.device().sm
    elements = {
        "bf16": (torch.bfloat16, ml_dtypes.bfloat16),
        "f16": (torch.float16, np.float16),
        "tf32": (torch.float32, np.float32),  # cuBLAS in tf32: allow_tf32 below
    }
    torch.backends.cuda.matmul.allow_tf32 = True
    rows = []
    for element, (torch_dtype, dtype) in elements.items():
        if args.element and element not in args.element:
            continue
        for variant in args.variant or (TF32_VARIANTS if element == "tf32" else VARIANTS):
            ok, numerics = check(variant, element, dtype, sm)
            print(f"{element} {label(variant)}: {numerics}", flush=True)
            for size in args.sizes:
                shape = (args.batch, size, size) if args.batch > 1 else (size, size)
                cells = [element, label(variant), "x".join(map(str, shape)), numerics]
                if not ok:
                    rows.append("| " + " | ".join([*cells, "", "", "", "", ""]) + " |")
                    continue
                a = gpu.randn(*shape).to(torch_dtype)
                b = gpu.randn(*shape).to(torch_dtype)
                program = BATCHED if args.batch > 1 else MATMUL
                text = source(program, element, size, size, size, args.batch)
                exe, kernel = compile_variant(text, variant, sm, element)
                va, vb = (GPUArray(tuple(t.shape), dtype, gpudata=t.data_ptr()) for t in (a, b))
                mine = gpu.kernel_us(lambda exe=exe, va=va, vb=vb: exe(va, vb), args.calls)
                theirs = gpu.kernel_us(lambda a=a, b=b: a @ b, args.calls)
                flops = 2 * args.batch * size**3 / 1e6  # per microsecond: TFLOP/s
                rate = f"{flops / mine:.0f} vs {flops / theirs:.0f}"
                cells += [kernel, f"{mine / 1e3:.3f}", f"{theirs / 1e3:.3f}", rate]
                cells.append(f"{theirs / mine:.2f}")
                rows.append("| " + " | ".join(cells) + " |")
                print(rows[-1], flush=True)
    header = [
        gpu.versions(),
        "",
        "| type | variant | size | odd shapes: rel err (kernel, 2 ulp) | kernel | mlc ms "
        "| cuBLAS ms | TFLOP/s mlc vs cuBLAS | cuBLAS/mlc |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    publish("\n".join(header + rows) + "\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
