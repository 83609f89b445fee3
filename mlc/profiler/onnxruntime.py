"""
onnxruntime's own per-node profile of an ONNX model, beside mlc's (`--compare onnxruntime`).

onnxruntime writes a Chrome trace when `SessionOptions.enable_profiling` is on: one
`Node` event `<node name>_kernel_time` per node and run, its duration in microseconds;
a node of its NCHWc layout, named after its output tensor (`<tensor>_nchwc`), is named
here after the model's node producing that tensor (a fused Conv+Clip: the Clip).
A node's time here is the median of its timed events times their number per run (a node
runs once a run, unless inside a loop). onnxruntime fuses nodes too (a Conv with its Relu);
a fused node keeps the name of its first node. An mlc layer is matched with the nodes
named among its sources; the nodes no layer names are listed on their own.
"""

import json
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlc.extras import require
from mlc.profiler.report import Profile

KERNEL_SUFFIX = "_kernel_time"


@dataclass(frozen=True)
class NodeTime:
    """A node of onnxruntime's run: its op type and its seconds per run."""

    op: str
    seconds: float


def node_times(
    model: str | Path, inputs: Sequence[Any], repeat: int, warmup: int = 1
) -> dict[str, NodeTime]:
    """Per node name, a run's time of `model` (a path) on `inputs` (its graph inputs,
    in order), from onnxruntime's profile of `repeat` runs after `warmup`."""
    ort: Any = require("onnxruntime", "--compare onnxruntime")
    with tempfile.TemporaryDirectory() as directory:
        options = ort.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(directory) / "ort")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        feed = {arg.name: value for arg, value in zip(session.get_inputs(), inputs, strict=True)}
        for _ in range(warmup + repeat):
            session.run(None, feed)
        trace = json.loads(Path(session.end_profiling()).read_text())
    return renamed(per_node(trace, warmup, repeat), producers(model))


NCHWC_SUFFIX = "_nchwc"  # onnxruntime's NCHWc nodes are named after their output tensor


def producers(model: str | Path) -> dict[str, str]:
    """The node that produces each tensor of `model`'s graph, by tensor name."""
    onnx: Any = require("onnx", "--compare onnxruntime")
    graph = onnx.load(str(model), load_external_data=False).graph
    return {output: node.name for node in graph.node for output in node.output if node.name}


def renamed(nodes: dict[str, NodeTime], produced_by: dict[str, str]) -> dict[str, NodeTime]:
    """`nodes` with onnxruntime's NCHWc nodes (`<tensor>_nchwc`) named after the model's
    node that produces `<tensor>`, the last of the nodes it fused."""
    result: dict[str, NodeTime] = {}
    for name, node in nodes.items():
        tensor = name.removesuffix(NCHWC_SUFFIX)
        key = produced_by.get(tensor, name) if tensor != name else name
        if key in result:
            key = name  # two of onnxruntime's nodes for one of the model's: keep both
        result[key] = node
    return result


def per_node(trace: Any, warmup: int, repeat: int) -> dict[str, NodeTime]:
    """The node times of an onnxruntime trace of `warmup` then `repeat` runs: the median
    of a node's timed events times their number per run."""
    events = trace if isinstance(trace, list) else trace.get("traceEvents", [])
    ops: dict[str, str] = {}
    durations: dict[str, list[float]] = {}
    for event in events:
        name = str(event.get("name", ""))
        if event.get("cat") == "Node" and name.endswith(KERNEL_SUFFIX):
            node = name.removesuffix(KERNEL_SUFFIX)
            ops[node] = str(event.get("args", {}).get("op_name", "?"))
            durations.setdefault(node, []).append(float(event.get("dur", 0)) / 1e6)
    times: dict[str, NodeTime] = {}
    for node, found in durations.items():
        timed = found[len(found) * warmup // (warmup + repeat) :]  # the timed runs' events
        times[node] = NodeTime(ops[node], statistics.median(timed) * len(timed) / repeat)
    return times


def compare(
    profile: Profile, nodes: dict[str, NodeTime]
) -> list[tuple[str, float | None, float | None]]:
    """(sources, mlc seconds, onnxruntime seconds) per layer, slowest first in mlc (no
    node matched: None), then the nodes no layer names (`r_nchwc (Conv)`; mlc: None)."""
    rows: list[tuple[str, float | None, float | None]] = []
    named: set[str] = set()
    for layer in profile.layers:
        matched = [s for s in layer.sources if s in nodes and s not in named]
        named.update(matched)
        theirs = sum(nodes[s].seconds for s in matched) if matched else None
        rows.append((", ".join(layer.sources), layer.seconds, theirs))
    rows += [
        (f"{name} ({node.op})", None, node.seconds)
        for name, node in nodes.items()
        if name not in named
    ]
    return rows


def comparison_table(profile: Profile, nodes: dict[str, NodeTime]) -> str:
    """mlc's layers beside onnxruntime's nodes: times and mlc's speed relative to it."""
    lines = [f"{'mlc':>10}  {'onnxruntime':>11}  {'speed':>6}  sources"]
    for sources, mine, theirs in compare(profile, nodes):
        mlc_text = "-" if mine is None else f"{mine * 1e6:.1f}us"
        theirs_text = "-" if theirs is None else f"{theirs * 1e6:.1f}us"
        speed = f"{theirs / mine:.2f}x" if mine and theirs else "-"
        lines.append(f"{mlc_text:>10}  {theirs_text:>11}  {speed:>6}  {sources}")
    total = sum(node.seconds for node in nodes.values())
    lines.append(
        f"kernels: mlc {profile.kernel_seconds * 1e6:.1f}us, onnxruntime {total * 1e6:.1f}us "
        "(speed: onnxruntime's time over mlc's; above 1x mlc is faster)"
    )
    return "\n".join(lines)
