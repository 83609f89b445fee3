"""
The tiled contraction kernel's shapes against each other and cuBLAS, in one process.

Each variant compiles `convert-contractions-to-gpu` with one block tile for every grid
(`tile=ROWS,COLS,THREAD_ROWS,THREAD_COLS,DEPTH`, `few-blocks=0`) and a launch bound
(`blocks-per-sm`). Three problems are timed against torch (TF32 off) by their GPU
kernel time per call (the CUDA profiler, so host work does not count): the MLP's
head (8192x128 @ 128x10 + bias: a narrow contraction, which the loop mapping's warps
take whatever the tile), its first layer (8192x784 @ 784x128 + bias, relu:
a tall, skinny output of few 128x128 tiles) and a 4096 matmul. Every variant is
first checked against numpy on odd sizes: 1000x333 @ 333x257 (scalar copies) and
997x332 @ 332x252, 131x4 @ 4x68 (16-byte copies: `cp.async` where the variant has
stages; K not a multiple of the slice depth, and shorter than one slice).

Run on a machine with a GPU: `python bench/gpu_tiles.py [--out FILE]`.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from gpu_setup import Device, publish

import mlc
from mlc import pipeline
from mlc.compiler import executable_cache

PROGRAM = """
func.func @layer(%x: tensor<8192x784xf32>, %w: tensor<784x128xf32>, %b: tensor<128xf32>)
    -> tensor<8192x128xf32> {
  %h = ml.matmul %x, %w : (tensor<8192x784xf32>, tensor<784x128xf32>) -> tensor<8192x128xf32>
  %s = ml.add %h, %b : (tensor<8192x128xf32>, tensor<128xf32>) -> tensor<8192x128xf32>
  %r = ml.relu %s : (tensor<8192x128xf32>) -> tensor<8192x128xf32>
  func.return %r : tensor<8192x128xf32>
}
func.func @mm(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = ml.matmul %a, %b : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  func.return %c : tensor<4096x4096xf32>
}
func.func @head(%h: tensor<8192x128xf32>, %w: tensor<128x10xf32>, %b: tensor<10xf32>)
    -> tensor<8192x10xf32> {
  %o = ml.matmul %h, %w : (tensor<8192x128xf32>, tensor<128x10xf32>) -> tensor<8192x10xf32>
  %s = ml.add %o, %b : (tensor<8192x10xf32>, tensor<10xf32>) -> tensor<8192x10xf32>
  func.return %s : tensor<8192x10xf32>
}
func.func @odd(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = ml.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}
"""

# (tile, blocks per SM)
VARIANTS = [
    ((128, 128, 8, 8, 8), 1),
    ((128, 128, 8, 8, 8), 2),
    ((128, 128, 8, 8, 16), 1),
    ((64, 128, 8, 8, 16), 1),
    ((128, 64, 8, 4, 16), 1),
    ((64, 64, 4, 4, 8), 1),
    ((64, 64, 4, 4, 16), 1),
    ((64, 64, 4, 4, 32), 1),
    ((32, 64, 4, 4, 16), 1),
    ((64, 32, 4, 4, 16), 1),
    ((32, 32, 4, 4, 16), 1),
    ((64, 64, 8, 4, 16), 1),
]


def _variant(text: str) -> tuple[tuple[int, ...], int]:
    """`R,C,TR,TC,D[:BLOCKS_PER_SM]` as a (tile, blocks per SM) variant."""
    tile, _, blocks = text.partition(":")
    return tuple(int(x) for x in tile.split(",")), int(blocks or 1)


def stage(tile: tuple[int, ...], blocks_per_sm: int) -> str:
    options = f"tile={','.join(map(str, tile))} few-blocks=0 blocks-per-sm={blocks_per_sm}"
    return pipeline.STAGES["parallel-loops"].replace(
        "convert-contractions-to-gpu", f"convert-contractions-to-gpu{{{options}}}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--out", type=Path, help="write a markdown table here")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--tile",
        action="append",
        metavar="R,C,TR,TC,D[,GROUPS[,STAGES]][:BLOCKS_PER_SM]",
        help="a variant to time instead of the built-in list (repeatable)",
    )
    args = parser.parse_args()
    variants = [_variant(text) for text in args.tile] if args.tile else VARIANTS

    gpu = Device()
    torch, randn, view = gpu.torch, gpu.randn, gpu.view

    x, w, b = randn(8192, 784), randn(784, 128) * 0.05, randn(128)
    ma, mb = randn(4096, 4096), randn(4096, 4096)
    layer_args, mm_args = [view(t) for t in (x, w, b)], [view(ma), view(mb)]
    hx, hw, hb = randn(8192, 128), randn(128, 10) * 0.1, randn(10)
    head_args = [view(t) for t in (hx, hw, hb)]
    cases = {
        "head": (lambda: hx @ hw + hb, head_args, 2 * 8192 * 128 * 10),
        "layer": (lambda: torch.relu(x @ w + b), layer_args, 2 * 8192 * 784 * 128),
        "mm": (lambda: ma @ mb, mm_args, 2 * 4096**3),
    }
    rng = np.random.default_rng(0)
    odd = [
        (rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32))
        for m, k, n in ((1000, 333, 257), (997, 332, 252), (131, 4, 68))
    ]
    default = pipeline.STAGES["parallel-loops"]
    rows = []
    for tile, blocks_per_sm in variants:
        pipeline.STAGES["parallel-loops"] = stage(tile, blocks_per_sm)
        executable_cache.clear()  # the same source: compile again, with this stage
        try:
            program = mlc.compile(PROGRAM, target="cuda")
        finally:
            pipeline.STAGES["parallel-loops"] = default
        err = max(
            float(np.abs(program["odd"](oa, ob) - oa.astype(np.float64) @ ob).max())
            for oa, ob in odd
        )
        cells = [
            f"{'x'.join(map(str, tile[:2]))}/{tile[2]}x{tile[3]}/{'/'.join(map(str, tile[4:]))}",
            str(blocks_per_sm),
        ]
        for name, (reference, operands, flops) in cases.items():
            ours = program[name]
            want = reference()
            rel = float(
                torch.linalg.norm(torch.as_tensor(ours(*operands).get()).cuda() - want)
                / torch.linalg.norm(want)
            )
            calls = 3 if name == "mm" else 10
            mine, theirs = (
                gpu.kernel_us(f, calls) / 1e3 for f in (lambda: ours(*operands), reference)
            )
            cells += [f"{mine:.3f}", f"{theirs:.3f}", f"{flops / mine / 1e9:.1f}", f"{rel:.0e}"]
        cells.append(f"{err:.0e}")
        rows.append("| " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    header = [
        gpu.versions(),
        "",
        "| tile/thread/depth[/groups] | blocks/SM | head ms | torch ms | TFLOP/s | rel err "
        "| layer ms | torch ms | TFLOP/s | rel err "
        "| mm4096 ms | torch ms | TFLOP/s | rel err | odd max err |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    publish("\n".join(header + rows) + "\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
