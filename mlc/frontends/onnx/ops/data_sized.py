"""
Ops whose output size depends on their input's values: NonZero.

With its input known at import, the importer evaluates the node (`graph.py`), so the
converter only sees an input known at run time, which it reports: the compiled code has
no way to size its result before the input's values are read, and specialising on the
values (as shape inputs are) would compile once per distinct input.
"""

from collections.abc import Sequence

from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.table import converts


@converts("NonZero", since=9)
def non_zero(node: Node) -> Sequence[Value]:
    raise NodeError(
        f"the input ('{node.proto.input[0]}') must be known at import time (an initializer, "
        "a Constant, or computed from static shapes): NonZero's output size depends on its "
        "values"
    )
