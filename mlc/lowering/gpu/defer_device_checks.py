"""
defer-device-checks: run-time checks of values computed on the device move to the end
of the host function, so that reading their value no longer waits for the GPU mid-call.

A gather's index check reduces the indices on the device, and the host reads the
result to decide its `cf.assert` (convert_ml_to_linalg.index_checks). On the GPU that
read is a `cuMemcpyDtoH`, which waits for every kernel launched so far: each check
drained the GPU and exposed the launch latency of everything after it. A failed check
does not stop the call (the checked op clamps its reads and writes, and the failure is
raised once the call returns: mlc.backend.assertions), so nothing after the check
needs its outcome, and it can run last:

    "gpu.launch_func"(...) {kernel = @kernels::@worst_index} ... %w
    %i = memref.load %w[] : memref<i64>
    memref.dealloc %w : memref<i64>
    %ok = arith.cmpi eq, %i, %clamped : i64
    cf.assert %ok, "'ml.gather' op index {} is out of range [-64, 64) of data dim 0"
    "gpu.launch_func"(...) {kernel = @kernels::@gather} ...
    func.return %r : memref<4x8xf32>
==>
    "gpu.launch_func"(...) {kernel = @kernels::@worst_index} ... %w
    "gpu.launch_func"(...) {kernel = @kernels::@gather} ...
    %i = memref.load %w[] : memref<i64>
    %ok = arith.cmpi eq, %i, %clamped : i64
    cf.assert %ok, "..."
    memref.dealloc %w : memref<i64>
    func.return %r : memref<4x8xf32>

A load moves when, in the block of the function's `func.return`, everything computed
from its value is side-effect-free `arith` ending in `cf.assert`s, and the buffer it
reads is one `memref.alloc` of that block that nothing touches after the load but such
loads (through views) and its `memref.dealloc`, which moves after them. The deferred
checks keep their order, after the launches: with the GPU idle by then, their reads
are plain copies. Should a check that stays in place fail too, its message is the one
raised (the first failure recorded), where before the earlier deferred one was.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

VIEWS = (memref.CollapseShapeOp, memref.ExpandShapeOp, memref.SubviewOp, memref.CastOp)


def defer_checks(function: func.FuncOp) -> int:
    """Move the function's deferrable checks to its end; return how many loads moved."""
    returns = [op for op in function.walk() if isinstance(op, func.ReturnOp)]
    if len(returns) != 1 or returns[0].parent_block() is None:
        return 0
    block = returns[0].parent_block()
    assert block is not None
    order = {op: i for i, op in enumerate(block.ops)}
    moved: list[Operation] = []
    deallocs: list[Operation] = []
    for load in [op for op in block.ops if isinstance(op, memref.LoadOp)]:
        slice_ = checks_of(load.res, block)
        root = buffer_root(load.memref)
        if slice_ is None or root is None or root.parent_block() is not block:
            continue
        dealloc = untouched_after(root, load, order)
        if dealloc is False:
            continue
        moved.extend([load, *slice_])
        if dealloc is not None and dealloc not in deallocs:
            deallocs.append(dealloc)
    if not moved:
        return 0
    # Keep the block's order among the moved ops: the slices may interleave.
    for op in sorted(set(moved), key=order.__getitem__) + deallocs:
        op.detach()
        block.insert_op_before(op, returns[0])
    return sum(isinstance(op, memref.LoadOp) for op in moved)


def checks_of(value: SSAValue, block: Block) -> list[Operation] | None:
    """
    The ops of `block` computed from `value` when they are all side-effect-free `arith`
    ops ending in `cf.assert`s (at least one), in no particular order; else None.
    """
    found: list[Operation] = []
    seen: set[Operation] = set()
    pending = [value]
    asserts = 0
    while pending:
        for use in list(pending.pop().uses):
            user = use.operation
            if user in seen:
                continue
            if user.parent_block() is not block:
                return None
            if isinstance(user, cf.AssertOp):
                asserts += 1
            elif user.dialect_name() == "arith" and is_side_effect_free(user):
                pending.extend(user.results)
            else:
                return None
            seen.add(user)
            found.append(user)
    return found if asserts else None


def buffer_root(value: SSAValue) -> memref.AllocOp | None:
    """The `memref.alloc` that `value` views (through `VIEWS`), or None."""
    owner = value.owner
    while isinstance(owner, VIEWS):
        owner = owner.operands[0].owner
    return owner if isinstance(owner, memref.AllocOp) else None


def untouched_after(
    root: memref.AllocOp, load: memref.LoadOp, order: dict[Operation, int]
) -> Operation | bool | None:
    """
    Whether nothing but loads and its dealloc uses the buffer of `root` after `load`:
    its `memref.dealloc` (None if it has none) if so, False otherwise.
    """
    dealloc: Operation | None = None
    pending: list[SSAValue] = [root.memref]
    while pending:
        for use in list(pending.pop().uses):
            user = use.operation
            if isinstance(user, VIEWS):
                pending.extend(user.results)
                continue
            if isinstance(user, memref.DeallocOp):
                dealloc = user
                continue
            if isinstance(user, memref.LoadOp):
                continue
            anchor = user
            while anchor.parent_op() is not None and anchor not in order:
                anchor = anchor.parent_op()
            if anchor not in order or order[anchor] > order[load]:
                return False
    return dealloc


@dataclass(frozen=True)
class DeferDeviceChecksPass(ModulePass):
    """Move host checks of device-computed values to the end of each host function."""

    name = "defer-device-checks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.body.block.ops:
            if isinstance(function, func.FuncOp):
                defer_checks(function)
