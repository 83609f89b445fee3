"""
The ops before a window generic on memrefs (a convolution, a pooling) that its kernel
can absorb, each then erased with it:

- the padded copy of the image: `convert-ml-to-linalg` pads into a buffer filled with
  a constant (an `alloc`, a fill generic, and a copy generic into a `subview` at the
  padding offsets); when only the window generic reads that buffer and nothing writes
  the image between the copy and the window generic, the kernel can read the image
  itself and stand in the constant outside it (`unpadded`);
- the bias of `ml.conv*d`, broadcast into the output by a generic just before, or the
  constant the output is filled with (a max pooling's lowest value, zeros): the
  accumulators can start at it (`bias_before`, `fill_before`).

Any spatial rank; the padding's offsets must be static (they are the op's pads).

Either buffer may be freed between the op that read it and the window generic (the
padded copy, the broadcast were its last use): the kernel that absorbs them reads it
later, so those frees (`frees_between`) must move after it. The image is often a view
(a reshape of a transposed gradient): its memory is freed, and may be written, through
the buffer it views or another view of it, so both checks follow every alias
(`buffer_views.aliases`).
"""

from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from mlc.lowering.support.buffer_views import VIEWS, aliases


@dataclass
class Padding:
    """An image read through a padded copy (module docstring)."""

    source: SSAValue
    """The image before padding."""

    offsets: list[int]
    """Where the image sits in the padded buffer, per dim (the pads before)."""

    value: Attribute
    """The padding constant (a FloatAttr or IntegerAttr)."""

    ops: list[Operation]
    """The ops that pad, in the order to erase them after the window generic."""


def _identity_copy(op: GenericOp, target: SSAValue) -> bool:
    """Whether `op` copies its one input to `target` element by element."""
    if len(op.inputs) != 1 or list(op.outputs) != [target] or op.res:
        return False
    maps = [m.data for m in op.get_indexing_maps().data]
    if any(m != AffineMap.identity(m.num_dims) for m in maps):
        return False
    yielded = op.body.block.last_op
    return yielded is not None and list(yielded.operands) == [op.body.block.args[0]]


def fill_constant(op: GenericOp) -> Attribute | None:
    """The constant an input-less, all-parallel, identity generic fills its output with."""
    if op.inputs or len(op.outputs) != 1 or op.res:
        return None
    if any(it.data != IteratorType.PARALLEL for it in op.iterator_types):
        return None
    map_ = op.get_indexing_maps().data[0].data
    yielded = op.body.block.last_op
    if map_ != AffineMap.identity(map_.num_dims) or not isinstance(yielded, YieldOp):
        return None
    owner = yielded.operands[0].owner
    if isinstance(owner, arith.ConstantOp) and owner.parent_block() is op.body.block:
        value = owner.value
        return value if isinstance(value, FloatAttr | IntegerAttr) else None
    return None


def _unused_between(value: SSAValue, first: Operation, last: Operation) -> bool:
    """Whether no op after `first` and before `last` in their block uses `value`'s
    memory (through any alias) but to view or free it."""
    if first.parent_block() is not last.parent_block() or not first.is_before_in_block(last):
        return False
    memory = set(aliases(value))
    between = first.next_op
    while between is not None and between is not last:
        uses = any(not memory.isdisjoint(inner.operands) for inner in between.walk())
        if uses and not isinstance(between, (memref.DeallocOp, *VIEWS)):
            return False
        between = between.next_op
    return True


def frees_between(value: SSAValue, first: Operation, last: Operation) -> list[memref.DeallocOp]:
    """The deallocs of `value`'s memory (through any alias) after `first` and before
    `last` in their block."""
    frees = []
    for alias in aliases(value):
        for use in alias.uses:
            free = use.operation
            if isinstance(free, memref.DeallocOp) and free.parent_block() is last.parent_block():
                if first.is_before_in_block(free) and free.is_before_in_block(last):
                    frees.append(free)
    return frees


def _users(
    op: GenericOp, image: SSAValue
) -> tuple[GenericOp, memref.SubviewOp, memref.DeallocOp | None] | None:
    """The fill, subview and dealloc of `image`, its only users but `op`, or None."""
    fill = subview = dealloc = None
    for use in image.uses:
        user = use.operation
        if user is op:
            continue
        if isinstance(user, GenericOp) and fill is None and fill_constant(user) is not None:
            fill = user
        elif isinstance(user, memref.SubviewOp) and subview is None:
            subview = user
        elif isinstance(user, memref.DeallocOp) and dealloc is None:
            dealloc = user
        else:
            return None
    if fill is None or subview is None or subview.offsets:
        return None
    return fill, subview, dealloc


def unpadded(op: GenericOp, image: SSAValue) -> Padding | None:
    """
    The padding of `image` that `op` can absorb (module docstring), or None: `image`
    is allocated in `op`'s block, filled with a constant, written by one copy of the
    source into a unit-stride subview at static offsets, and read by `op` alone.
    """
    alloc = image.owner
    if not isinstance(alloc, memref.AllocOp) or alloc.parent_block() is not op.parent_block():
        return None
    if sum(o is image for o in op.operands) != 1 or (users := _users(op, image)) is None:
        return None
    fill, subview, dealloc = users
    uses = list(subview.result.uses)
    if len(uses) != 1 or not isinstance(copy := uses[0].operation, GenericOp):
        return None
    if not _identity_copy(copy, subview.result):
        return None
    if any(s != 1 for s in subview.static_strides.get_values()):
        return None
    if not (fill.is_before_in_block(copy) and copy.is_before_in_block(op)):
        return None
    source = copy.inputs[0]
    if not _unused_between(source, copy, op):
        return None  # its buffer may be written before the window generic reads it
    value = fill_constant(fill)
    assert value is not None
    ops = [copy, subview, fill] + ([dealloc] if dealloc else []) + [alloc]
    return Padding(source, list(subview.static_offsets.get_values()), value, ops)


def _last_writer(op: GenericOp) -> GenericOp | None:
    """The generic that writes `op`'s output (alone) last before it, if nothing else
    reads or writes the output in between."""
    buffer = op.outputs[0]
    previous = op.prev_op
    while previous is not None:
        if isinstance(previous, GenericOp) and list(previous.outputs) == [buffer]:
            return previous
        if not isinstance(previous, memref.DimOp) and any(
            buffer in inner.operands for inner in previous.walk()
        ):
            return None
        previous = previous.prev_op
    return None


def bias_before(op: GenericOp) -> GenericOp | None:
    """
    The generic that writes `op`'s output last before it, if it copies its one input
    into every element (a bias broadcast along the output's dims) and nothing reads or
    writes the output, or uses the bias but to free it, in between: the accumulators
    can start at the bias instead.
    """
    previous = _last_writer(op)
    if previous is None or not _is_broadcast(previous):
        return None
    # the bias is read later, by the kernel: nothing may write it in between
    return previous if _unused_between(previous.inputs[0], previous, op) else None


def fill_before(op: GenericOp) -> GenericOp | None:
    """
    The generic that writes `op`'s output last before it, if it fills it with a float
    constant (a max pooling's lowest value, a convolution's zeros without a bias) and
    nothing reads or writes the output in between: the accumulators can start at it.
    """
    previous = _last_writer(op)
    if previous is None or not isinstance(fill_constant(previous), FloatAttr):
        return None
    return previous


def _is_broadcast(op: GenericOp) -> bool:
    """One input copied to every output element: all parallel, identity output map."""
    if len(op.inputs) != 1 or op.res or op.inputs[0] is op.outputs[0]:
        return False
    if any(it.data != IteratorType.PARALLEL for it in op.iterator_types):
        return False
    output_map = op.get_indexing_maps().data[1].data
    yielded = op.body.block.last_op
    return (
        output_map == AffineMap.identity(output_map.num_dims)
        and yielded is not None
        and list(yielded.operands) == [op.body.block.args[0]]
    )
