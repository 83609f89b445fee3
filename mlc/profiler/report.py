"""
A `Profile` and its three forms: a table for the terminal, JSON for tools, and the
Chrome trace format (`chrome://tracing`, https://ui.perfetto.dev) for the timeline.

JSON (`Profile.as_json`, schema `SCHEMA`):

    {"schema": "mlc-profile/1", "target": "cpu", "function": "main", "repeat": 20,
     "call_seconds": ..., "kernel_seconds": ..., "outside_seconds": ...,
     "peaks": {"gflops": ... | null, "gbps": ... | null},
     "layers": [{"sources": ["conv1", "relu1"], "seconds": ..., "share": ...,
                 "flops": ... | null, "bytes": ... | null, "ops": ["ml.conv2d", ...],
                 "gflops": ... | null, "gbps": ... | null,
                 "peak_flops_share": ... | null, "peak_bytes_share": ... | null,
                 "kernels": [{"id": 3, "function": "main", "kind": "scf.parallel",
                              "seconds": ..., "runs": 1}, ...]}, ...]}

Layers are sorted by time, the slowest first; `share` is of the kernels' total time.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlc.lowering.support.kernel_sources import KernelInfo
from mlc.profiler.measure import Layer, Peaks, Timeline

SCHEMA = "mlc-profile/1"


@dataclass
class Profile:
    """Where a call of a compiled function spends its time, layer by layer."""

    target: str
    function: str
    repeat: int
    call_seconds: float  # median wall time of a call
    layers: list[Layer]  # the slowest first
    peaks: Peaks
    timeline: Timeline
    kernels: list[KernelInfo]
    outputs: Any  # the results of the last call

    @property
    def kernel_seconds(self) -> float:
        return sum(layer.seconds for layer in self.layers)

    @property
    def outside_seconds(self) -> float:
        """Time of a call that no kernel covers: checks, allocation, glue."""
        return max(self.call_seconds - self.kernel_seconds, 0.0)

    def share(self, layer: Layer) -> float:
        total = self.kernel_seconds
        return layer.seconds / total if total > 0 else 0.0

    def peak_shares(self, layer: Layer) -> tuple[float | None, float | None]:
        flops = layer.gflops / self.peaks.gflops if layer.gflops and self.peaks.gflops else None
        moved = layer.gbps / self.peaks.gbps if layer.gbps and self.peaks.gbps else None
        return flops, moved

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "target": self.target,
            "function": self.function,
            "repeat": self.repeat,
            "call_seconds": self.call_seconds,
            "kernel_seconds": self.kernel_seconds,
            "outside_seconds": self.outside_seconds,
            "peaks": {"gflops": self.peaks.gflops, "gbps": self.peaks.gbps},
            "layers": [self._layer_json(layer) for layer in self.layers],
        }

    def _layer_json(self, layer: Layer) -> dict[str, Any]:
        flops_share, bytes_share = self.peak_shares(layer)
        return {
            "sources": list(layer.sources),
            "seconds": layer.seconds,
            "share": self.share(layer),
            "flops": layer.cost.flops,
            "bytes": layer.cost.bytes,
            "ops": list(layer.cost.ops),
            "gflops": layer.gflops,
            "gbps": layer.gbps,
            "peak_flops_share": flops_share,
            "peak_bytes_share": bytes_share,
            "kernels": [
                {
                    "id": k.info.id,
                    "function": k.info.function,
                    "kind": k.info.kind,
                    "seconds": k.seconds,
                    "runs": k.runs,
                }
                for k in layer.kernels
            ],
        }

    def chrome_trace(self) -> dict[str, Any]:
        """The last call as Chrome trace events: the call, and each kernel run inside it."""
        by_id = {k.id: k for k in self.kernels}
        events: list[dict[str, Any]] = [
            _event(f"@{self.function}", "call", 0, self.timeline.call_ns, {})
        ]
        for id_, start, end in self.timeline.events:
            info = by_id[id_]
            name = ", ".join(info.sources) or info.kind
            args = {"id": id_, "kind": info.kind, "sources": list(info.sources)}
            events.append(_event(name, info.kind, start, end - start, args))
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    def save_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.as_json(), indent=1) + "\n")

    def save_trace(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.chrome_trace()) + "\n")

    def table(self, limit: int | None = None) -> str:
        """The layers as a table, the slowest first (`limit`: only so many)."""
        return format_table(self, limit)

    def __str__(self) -> str:
        return self.table()


def _event(name: str, category: str, start_ns: int, duration_ns: int, args: dict[str, Any]):
    return {
        "name": name,
        "cat": category,
        "ph": "X",
        "ts": start_ns / 1e3,
        "dur": duration_ns / 1e3,
        "pid": 0,
        "tid": 0,
        "args": args,
    }


def _quantity(value: float | None, unit: str = "") -> str:
    """`value` with an SI prefix: 1.29M, 13.6kB; `-` when unknown."""
    if value is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}{unit}"
    return f"{value:.3g}{unit}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def format_table(profile: Profile, limit: int | None = None) -> str:
    """The layers of `profile` as aligned columns, then the totals."""
    header = ("time", "share", "kernels", "FLOPs", "bytes", "GFLOP/s", "GB/s", "%peak", "sources")
    rows = [header]
    for layer in profile.layers[:limit]:
        flops_share, bytes_share = profile.peak_shares(layer)
        peak = "/".join([_percent(flops_share), _percent(bytes_share)])
        rows.append(
            (
                f"{layer.seconds * 1e6:.1f}us",
                f"{100 * profile.share(layer):.1f}%",
                str(len(layer.kernels)),
                _quantity(layer.cost.flops),
                _quantity(layer.cost.bytes, "B"),
                _quantity(layer.gflops),
                _quantity(layer.gbps),
                peak,
                ", ".join(layer.sources) or "(no source)",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = [
        "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in rows
    ]
    hidden = len(profile.layers) - len(rows) + 1
    if hidden > 0:
        lines.append(f"... {hidden} more layers")
    lines.append(
        f"@{profile.function} on {profile.target}: {profile.call_seconds * 1e6:.1f}us a call "
        f"(median of {profile.repeat}), {profile.kernel_seconds * 1e6:.1f}us in "
        f"{len(profile.kernels)} kernels, {profile.outside_seconds * 1e6:.1f}us outside them"
    )
    return "\n".join(lines)
