"""
`mlc-run --profile`: the profiler's options and what it prints (tools/mlc_run.py calls
these, so the tool stays a thin driver).

    mlc-run model.onnx --random --profile [--repeat N] [--json PATH] [--trace PATH]
                       [--peaks GFLOPS,GBPS] [--compare onnxruntime]
"""

import argparse
from typing import Any

from mlc.profiler import onnxruntime as ort_profile
from mlc.profiler.measure import Peaks
from mlc.profiler.report import Profile

DEFAULT_REPEAT = 20  # timed calls when --profile is given without --repeat


def peaks(text: str) -> Peaks:
    """`GFLOPS,GBPS` from the command line (either may be empty)."""
    flops, sep, moved = text.partition(",")
    try:
        values = [float(v) if v else None for v in (flops, moved)] if sep else None
    except ValueError:
        values = None
    if values is None or any(v is not None and v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected GFLOPS,GBPS such as 900,40, got '{text}'")
    return Peaks(values[0], values[1])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("profiling (--profile)")
    group.add_argument(
        "--profile",
        action="store_true",
        help="time each kernel, layer by layer, over --repeat calls (default 20)",
    )
    group.add_argument("--json", metavar="PATH", help="write the profile as JSON")
    group.add_argument("--trace", metavar="PATH", help="write the last call as a Chrome trace")
    group.add_argument(
        "--peaks",
        type=peaks,
        metavar="GFLOPS,GBPS",
        help="the machine's FMA peak and memory bandwidth, for shares of them",
    )
    group.add_argument(
        "--compare",
        choices=["onnxruntime"],
        help="onnxruntime's per-node profile beside mlc's (an .onnx program)",
    )
    group.add_argument("--limit", type=int, metavar="N", help="show the N slowest layers only")


def check(args: argparse.Namespace) -> str | None:
    """What is wrong with the profiling options, if anything."""
    wanted = [f"--{name}" for name in ("json", "trace", "peaks", "compare", "limit")]
    given = [flag for flag in wanted if getattr(args, flag[2:]) is not None]
    if given and not args.profile:
        return f"{given[0]} needs --profile"
    if args.compare and not str(args.program).endswith(".onnx"):
        return "--compare onnxruntime needs an .onnx program"
    return None


def run(args: argparse.Namespace, executable: Any, function: str, inputs: list[Any]) -> Profile:
    """Profile `function` of `executable` on `inputs`; print, and write what was asked."""
    repeat = args.repeat if args.repeat > 1 else DEFAULT_REPEAT
    profile = executable.profile(*inputs, repeat=repeat, function=function, peaks=args.peaks)
    print(profile.table(args.limit))
    if args.compare == "onnxruntime":
        nodes = ort_profile.node_times(args.program, inputs, repeat)
        print()
        print(ort_profile.comparison_table(profile, nodes))
    if args.json is not None:
        profile.save_json(args.json)
    if args.trace is not None:
        profile.save_trace(args.trace)
    return profile
