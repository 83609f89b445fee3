"""
Hoist loop-invariant, side-effect-free ops out of `scf.for` and `scf.while` loops.

mlc's `licm` replaces xDSL's (which handles `scf.for` only). Loops are visited
innermost first, so an op invariant to a whole nest climbs one level per loop,
as far out as it stays invariant. In each loop region (the body of a `scf.for`,
the `before` and the `after` region of a `scf.while`) the candidates are the
top-level ops that have no memory effects, hold no regions and are not the
terminator, and whose operands are all defined outside the loop or by other
candidates (so chains move together):

    %r = scf.for %i = %lo to %hi step %c1 iter_args(%x = %x0) -> (tensor<4xf32>) {
      %beta = ml.sub %one, %alpha : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %y = ml.mul %beta, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
      scf.yield %y : tensor<4xf32>
    }
    // %beta is computed once, before the loop; %y depends on %x and stays.

Ops nested in an `scf.if` (or any other region) of the body are never hoisted: they
may not run at all. A candidate stays in the loop when

- it is not speculatable (`xdsl.traits.is_speculatable`: integer `ml.div`,
  `ml.gather`, `arith.divsi`, `tensor.dim`, ...) and the region may run zero times:
  a `scf.for` whose bounds are not constants with `lb < ub` and `step > 0`, or the
  `after` region of a `scf.while` (its `before` region always runs once);
- hoisting is not worth the memory (`hoisting_cost`): its tensor results would stay
  live across the loop, they exceed `max-live-bytes` (default 64 MiB), and the op
  does fewer FLOPs per iteration than it keeps bytes live (recomputing it is about
  as cheap as streaming it). Scalar and index results, constants and results of
  unknown size are always hoisted. A large result all of whose users are hoisted
  too is not live across the loop, so a cheap producer feeding a hoisted matmul
  still moves;
- an operand is produced by a candidate that stays.

Every hoisted `ml` op gets a remark (`hoisted out of scf.for (saves N flops per
iteration)`) and every candidate that stays gets the reason (`not hoisted: ...`);
see `mlc-opt --remarks`. The pass is idempotent: what stays, stays again.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import ConstantLike, IsTerminator, is_side_effect_free, is_speculatable

from mlc.cost_model import flops, tensor_bytes
from mlc.diagnostics import op_remark
from mlc.dialects.ml import MLOp

Loop = scf.ForOp | scf.WhileOp

DEFAULT_MAX_LIVE_BYTES = 64 * 2**20


# ---------------------------------------------------------------------------
# Facts about loops and ops
# ---------------------------------------------------------------------------


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer or index `arith.constant`, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def may_run_zero_times(loop: Loop, region: Region) -> bool:
    """Whether `region` of `loop` may never execute, so hoisting could add work or UB."""
    if isinstance(loop, scf.WhileOp):
        return region is loop.after_region  # `before` runs at least once
    lb, ub, step = (constant_int(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None:
        return True
    return not (lb < ub and step > 0)


def defined_outside(value: SSAValue, loop: Loop) -> bool:
    owner = value.owner
    definer = owner.parent_op() if isinstance(owner, Block) else owner
    return definer is None or not loop.is_ancestor(definer)


def is_candidate_kind(op: Operation) -> bool:
    """Ops licm may move at all: no memory effects, no regions, not a terminator."""
    return not op.regions and not op.has_trait(IsTerminator) and is_side_effect_free(op)


def invariant_ops(loop: Loop, region: Region) -> list[Operation]:
    """The top-level ops of `region` that are invariant once their producers are hoisted."""
    invariant: list[Operation] = []
    hoistable: set[Operation] = set()
    for op in region.block.ops:
        if is_candidate_kind(op) and all(
            defined_outside(v, loop) or v.owner in hoistable for v in op.operands
        ):
            invariant.append(op)
            hoistable.add(op)
    return invariant


def live_bytes(op: Operation) -> int | None:
    """The bytes of the op's tensor results (scalars count 0), or None if unknown."""
    total = 0
    for result in op.results:
        if not isinstance(result.type, TensorType):
            continue
        if (size := tensor_bytes(result)) is None:
            return None
        total += size
    return total


def hoisting_cost(op: Operation, max_live_bytes: int) -> int | None:
    """
    The bytes hoisting `op` would keep live, if that is too much for what it saves.

    Declines only an op whose results are known to exceed `max_live_bytes` and which
    does fewer FLOPs than that many bytes per iteration (non-`ml` ops count 0 FLOPs).
    Constants are materialised once whatever the pass does, so they always move.
    """
    if op.has_trait(ConstantLike):
        return None
    size = live_bytes(op)
    if size is None or size <= max_live_bytes:
        return None
    return size if (flops(op) or 0) < size else None


def format_bytes(size: int) -> str:
    """A byte count for a remark, in decimal units: `4.0 MB`."""
    if size < 1000:
        return f"{size} bytes"
    scaled, unit = size / 1000, "KB"
    for bigger in ("MB", "GB"):
        if scaled < 1000:
            break
        scaled, unit = scaled / 1000, bigger
    return f"{scaled:.1f} {unit}"


# ---------------------------------------------------------------------------
# The decision
# ---------------------------------------------------------------------------


def _kept_live_in_loop(
    op: Operation, loop: Loop, invariant: set[Operation], stays: dict[Operation, str]
) -> bool:
    """Whether a result of `op` has a user that stays in `loop` (keeping it live)."""
    return any(
        loop.is_ancestor(user := use.operation) and (user not in invariant or user in stays)
        for result in op.results
        for use in result.uses
    )


def _stay_reason(
    op: Operation,
    loop: Loop,
    invariant: set[Operation],
    stays: dict[Operation, str],
    max_live_bytes: int,
) -> str | None:
    """Why `op` must stay given what stays so far, or None if it may still move."""
    for operand in op.operands:
        if isinstance(producer := operand.owner, Operation) and producer in stays:
            return f"not hoisted: depends on '{producer.name}', which stays in the loop"
    size = hoisting_cost(op, max_live_bytes)
    if size is not None and _kept_live_in_loop(op, loop, invariant, stays):
        return f"not hoisted: would keep {format_bytes(size)} live across the loop"
    return None


def stay_reasons(
    loop: Loop, region: Region, invariant: Sequence[Operation], max_live_bytes: int
) -> dict[Operation, str]:
    """
    The invariant ops of `region` that must stay in `loop`, each with its reason.

    Staying is contagious both ways: an op whose producer stays cannot move, and a
    large cheap op stays once one of its users does. So this is a fixpoint, starting
    from the ops that must not be speculated.
    """
    stays: dict[Operation, str] = {}
    if may_run_zero_times(loop, region):
        for op in invariant:
            if not is_speculatable(op):
                stays[op] = "not hoisted: not speculatable and the loop may run zero times"
    candidates = set(invariant)
    changed = True
    while changed:
        changed = False
        for op in invariant:
            if op in stays:
                continue
            if reason := _stay_reason(op, loop, candidates, stays, max_live_bytes):
                stays[op] = reason
                changed = True
    return stays


# ---------------------------------------------------------------------------
# The rewrite
# ---------------------------------------------------------------------------


def hoisted_remark(op: Operation, loop: Loop) -> str:
    saved = flops(op)
    per_iteration = f" (saves {saved} flops per iteration)" if saved is not None else ""
    return f"hoisted out of {loop.name}{per_iteration}"


def hoist_from_region(loop: Loop, region: Region, max_live_bytes: int) -> None:
    """Move the invariant ops of `region` that may move before `loop`, in order."""
    invariant = invariant_ops(loop, region)
    stays = stay_reasons(loop, region, invariant, max_live_bytes)
    parent = loop.parent_block()
    assert parent is not None  # a loop always sits in a block
    for op in invariant:
        if (reason := stays.get(op)) is not None:
            op_remark(op, reason)
            continue
        op.detach()
        parent.insert_op_before(op, loop)
        if isinstance(op, MLOp):
            op_remark(op, hoisted_remark(op, loop))


def loop_regions(loop: Loop) -> tuple[Region, ...]:
    if isinstance(loop, scf.ForOp):
        return (loop.body,)
    return (loop.before_region, loop.after_region)


@dataclass(frozen=True)
class LoopInvariantCodeMotionPass(ModulePass):
    """Hoist invariant ops out of `scf.for` / `scf.while` (see the module docstring)."""

    name = "licm"

    max_live_bytes: int = DEFAULT_MAX_LIVE_BYTES

    def __post_init__(self) -> None:
        if self.max_live_bytes < 0:
            raise ValueError(f"max-live-bytes must be 0 or more, got {self.max_live_bytes}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Post-order (regions first): inner loops before the loops around them, so
        # an op hoisted out of an inner loop is a candidate of the outer one.
        loops = [o for o in op.walk(region_first=True) if isinstance(o, Loop)]
        for loop in loops:
            for region in loop_regions(loop):
                hoist_from_region(loop, region, self.max_live_bytes)
