"""
A GPU benchmark script run with one of the row kernels' choices taken back, for A/B
runs of the same tree in one device call (alternate the names, compare the ratios):

    python bench/gpu_ab.py NAME [SCRIPT] [ARGS...]     # SCRIPT: bench/gpu.py by default

NAME: `as-is` (nothing taken back), `unfused` (no `fuse-row-epilogues`: statistics
and their consumers in kernels of their own), `scalar-rows` (no 16-byte groups in the
warp row loops, `warp_vectors`), `unrollN` (N lane iterations a step instead of 4),
`wide-heads` (contractions of few columns on the shared-memory tiled kernel again, not
a warp a row: `NARROW_COLUMNS` 0).
bench/results/gpu.md quotes runs of `--only rows` and `bench/gpu_profile.py` this way.
"""

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import mlc.lowering.gpu.loop_analysis as loop_analysis  # noqa: E402
import mlc.lowering.gpu.loop_mapping.warp_reduction as warp  # noqa: E402
from mlc import pipeline  # noqa: E402

VARIANTS = ("as-is", "unfused", "scalar-rows", "unrollN", "wide-heads")


def take_back(name: str) -> None:
    """Undo the choice `name` names, in this process."""
    if name == "unfused":
        pipeline.STAGES["gpu"] = pipeline.STAGES["gpu"].replace("fuse-row-epilogues,", "")
    elif name == "scalar-rows":
        warp.vector_prefix = lambda loop, lane, inits: list(inits)
    elif name == "wide-heads":
        loop_analysis.NARROW_COLUMNS = 0
    elif name.startswith("unroll") and name[len("unroll") :].isdigit():
        warp.UNROLL = int(name[len("unroll") :])
    elif name != "as-is":
        sys.exit(f"gpu_ab.py: unknown variant '{name}' (known: {', '.join(VARIANTS)})")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(f"usage: gpu_ab.py NAME [SCRIPT] [ARGS...]; NAME one of {', '.join(VARIANTS)}")
    name = sys.argv.pop(1)
    script = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1].endswith(".py") else None
    take_back(name)
    print(f"## {name}", flush=True)
    path = Path(script) if script else ROOT / "bench" / "gpu.py"
    sys.argv[0] = str(path)
    runpy.run_path(str(path), run_name="__main__")


if __name__ == "__main__":
    main()
