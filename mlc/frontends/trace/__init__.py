"""
The Python frontend: tracing functions on arrays into `ml` programs, and `mlc.jit`.

From the bottom up: `tracer` (where ops go, locations, errors), `dispatch` (op
functions by numpy name), `array` (`TracedArray`), `recording` (lifting, promotion,
recording an op), `functions` (the op functions by family, re-exported as `mlc.ops`),
`program` (`mlc.trace`), then `mlc.jit`'s `pieces`, `bucketing` and `jit`. Importing
this package imports `functions`, which registers what traced arrays dispatch to.
"""

from mlc.frontends.trace import functions
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.program import trace
from mlc.frontends.trace.tracer import TraceError

__all__ = ["TraceError", "TracedArray", "functions", "trace"]
