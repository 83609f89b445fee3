"""
The command line of the thread-count benchmarks (`matmul_kernel.py`, `mlp_profile.py`).

`parse` sets the thread variables of mlc, OpenBLAS and OpenMP before anything loads
numpy's BLAS, which reads them once: so this module imports nothing heavy, and the
scripts import `cpu` and numpy only after calling it.
"""

import argparse
import os
from pathlib import Path

THREAD_VARIABLES = ("MLC_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def parse(description: str, results: Path, argv: list[str] | None) -> argparse.Namespace:
    """`--threads`, `--rounds` and `--output`, with the thread variables set."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--rounds", type=int, default=9, help="alternating bursts per system")
    parser.add_argument("--output", default=str(results), help="file to append to; - to print")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error(f"--threads must be positive, got {args.threads}")
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(args.threads)
    return args
