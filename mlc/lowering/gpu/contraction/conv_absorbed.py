"""
The ops around a convolution that the GPU's implicit GEMM absorbs
(`mlc.lowering.gpu.contraction.conv_match`), each then erased with it:

- the padded copy of the image: the linalg stage pads into a zero-filled buffer (an
  `alloc`, a fill generic of 0, and a copy generic into a `subview` at the padding
  offsets); when only the convolution reads that buffer and nothing uses the image
  between the copy and the convolution, the kernel reads the image itself, zero
  outside it (`unpadded`);
- the bias of `ml.conv2d`, broadcast into the output by a generic just before: the
  accumulators start at it (`bias_before`).
"""

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineMap

from mlc.lowering.gpu.fills import filled_with


def _padding_users(op: GenericOp, image: SSAValue) -> tuple | None:
    """The fill, subview and dealloc of a buffer that `op` is the only other user of."""
    fill = subview = dealloc = None
    for use in image.uses:
        user = use.operation
        if user is op:
            continue
        if isinstance(user, GenericOp) and fill is None and fill_value(user) == 0.0:
            fill = user
        elif isinstance(user, memref.SubviewOp) and subview is None:
            subview = user
        elif isinstance(user, memref.DeallocOp) and dealloc is None:
            dealloc = user
        else:
            return None
    return (fill, subview, dealloc) if fill is not None and subview is not None else None


def unpadded(op: GenericOp, image: SSAValue) -> tuple[SSAValue, tuple[int, int], list]:
    """
    The image before padding, the top and left padding, and the ops that pad it (all
    to go with the convolution), when `image` is a zero-filled buffer that only this
    convolution reads and a copy generic writes the source into at an offset.
    """
    unchanged = image, (0, 0), []
    alloc = image.owner
    if not isinstance(alloc, memref.AllocOp) or alloc.parent_block() is not op.parent_block():
        return unchanged
    if (users := _padding_users(op, image)) is None:
        return unchanged
    fill, subview, dealloc = users
    uses = list(subview.result.uses)
    if len(uses) != 1 or not isinstance(copy := uses[0].operation, GenericOp):
        return unchanged
    if not _is_copy(copy, subview.result) or subview.offsets:
        return unchanged  # dynamic offsets: not the linalg stage's padding
    offsets = subview.static_offsets.get_values()
    strides = subview.static_strides.get_values()
    if len(offsets) != 4 or offsets[0] or offsets[1] or any(s != 1 for s in strides):
        return unchanged
    source = copy.inputs[0]
    if not _unused_between(source, copy, op):
        return unchanged  # its buffer may be written before the convolution reads it
    ops = [copy, subview, fill] + ([dealloc] if dealloc else []) + [alloc]
    return source, (offsets[2], offsets[3]), ops


def bias_before(op: GenericOp) -> GenericOp | None:
    """
    The generic that writes `op`'s output last before it, if it copies its one input
    into every element (the bias of `ml.conv2d`, broadcast along the output's dims) and
    nothing reads or writes the output in between: the accumulators can start at the
    bias instead, and the generic goes.
    """
    buffer = op.outputs[0]
    previous = op.prev_op
    while previous is not None:
        if isinstance(previous, GenericOp) and list(previous.outputs) == [buffer]:
            return previous if _is_broadcast(previous) else None
        if not isinstance(previous, memref.DimOp) and any(
            buffer in inner.operands for inner in previous.walk()
        ):
            return None
        previous = previous.prev_op
    return None


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


def _unused_between(value: SSAValue, first: Operation, last: Operation) -> bool:
    """Whether no op from `first` to `last` in their block uses `value` but to free it."""
    if first.parent_block() is not last.parent_block() or not first.is_before_in_block(last):
        return False
    between = first.next_op
    while between is not None and between is not last:
        uses = any(value in inner.operands for inner in between.walk())
        if uses and not isinstance(between, memref.DeallocOp):
            return False
        between = between.next_op
    return True


def fill_value(fill: GenericOp) -> float | None:
    """The float constant a fill generic writes, if it writes one."""
    constant = filled_with(fill)
    if constant is None or not isinstance(owner := constant.owner, arith.ConstantOp):
        return None
    value = owner.value
    return value.value.data if isinstance(value, FloatAttr) else None


def _is_copy(op: GenericOp, target: SSAValue) -> bool:
    """Whether `op` copies its one input to `target` element by element, before the conv."""
    if len(op.inputs) != 1 or list(op.outputs) != [target]:
        return False
    maps = [m.data for m in op.get_indexing_maps().data]
    if any(m != AffineMap.identity(m.num_dims) for m in maps):
        return False
    yielded = op.body.block.last_op
    return yielded is not None and list(yielded.operands) == [op.body.block.args[0]]
