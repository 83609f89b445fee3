"""
The ops nested in an op, in `Operation.walk` order, with an explicit stack.

xDSL's `Operation.walk` is a generator per nesting level (op -> region -> block ->
op ...), so every op yielded climbs back through each generator above it: on ResNet-50's
loop-level IR (~23k ops) a full walk costs ~2x what this list does, and the hot
passes (convert-to-llvm, the parallel outlining, function merging) walk it many times.
"""

from xdsl.ir import Operation


def walk_ops(op: Operation) -> list[Operation]:
    """`list(op.walk())`: `op`, then the ops of its regions, pre-order, in block order."""
    found: list[Operation] = []
    stack = [op]
    while stack:
        current = stack.pop()
        found.append(current)
        if not current.regions:
            continue
        children: list[Operation] = []
        for region in current.regions:
            for block in region.blocks:
                inner = block.first_op
                while inner is not None:
                    children.append(inner)
                    inner = inner.next_op
        children.reverse()
        stack.extend(children)
    return found


def inside(op: Operation, kind: type[Operation] | tuple[type[Operation], ...]) -> bool:
    """Whether an op enclosing `op` (not `op` itself) is a `kind`."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, kind):
            return True
        parent = parent.parent_op()
    return False
