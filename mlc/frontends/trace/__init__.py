"""
The Python frontend: tracing functions on arrays into `ml` programs, and `mlc.jit`.

`tracer` (where ops go, locations, errors), `proxy` (the traced array),
`indexing`, `control_flow` (`scf` from `ops.cond` / `while_loop` / `fori_loop`),
`program` (`mlc.trace`). The op functions users call live in `mlc.ops`.
"""

from mlc.frontends.trace.program import trace
from mlc.frontends.trace.proxy import TracedArray
from mlc.frontends.trace.tracer import TraceError

__all__ = ["TraceError", "TracedArray", "trace"]
