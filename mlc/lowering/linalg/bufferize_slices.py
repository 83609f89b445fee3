"""
A generic that updates a slice of a tensor and puts it back, written in place:

    %s = tensor.extract_slice %a[offsets] [sizes] [strides]
    %r = linalg.generic ins(...) outs(%s) { ... }
    %b = tensor.insert_slice %r into %a[offsets] [sizes] [strides]

Without this `bufferize` copies `%s` into a temporary (the generic reads its output while
`%a` is still alive: the insert reads it), runs the generic there and copies the result
back: two extra passes over the slice. When nothing else reads `%a`'s buffer between the
generic and the insert and the insert may write `%a` in place, the generic writes the
slice's view of `%a` directly and the insert is a no-op. This is the read-modify-write of
one row per update in `convert_ml_to_linalg/scatter_rows.py` (a MoE layer's scatter-add
of each expert's rows, an embedding gradient).
"""

from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue

from mlc.lowering.linalg.bufferize_state import BufferState, ancestor_in


def _same_slice(extract: tensor.ExtractSliceOp, insert: tensor.InsertSliceOp) -> bool:
    return (
        extract.static_offsets == insert.static_offsets
        and extract.static_sizes == insert.static_sizes
        and extract.static_strides == insert.static_strides
        and tuple(extract.offsets) == tuple(insert.offsets)
        and tuple(extract.sizes) == tuple(insert.sizes)
        and tuple(extract.strides) == tuple(insert.strides)
    )


def _write_back(op: GenericOp, k: int) -> tuple[tensor.ExtractSliceOp, tensor.InsertSliceOp] | None:
    """The slice output `k` of `op` updates and the insert that puts it back, if any."""
    out, result = op.outputs[k], op.res[k]
    extract = out.owner
    if not isinstance(extract, tensor.ExtractSliceOp) or out.uses.get_length() != 1:
        return None
    if result.uses.get_length() != 1:
        return None
    insert = next(iter(result.uses)).operation
    if (
        not isinstance(insert, tensor.InsertSliceOp)
        or insert.source is not result
        or insert.dest is not extract.source
        or insert.parent_block() is not op.parent_block()
        or not _same_slice(extract, insert)
    ):
        return None
    return extract, insert


def _untouched_meanwhile(
    state: BufferState, op: GenericOp, k: int, buffer: SSAValue, insert: Operation
) -> bool:
    """Nothing but output `k` of `op` reads `buffer` from `op` up to `insert` (the uses
    after it are `can_overwrite`'s), and `op` reads no other part of it."""
    block = op.parent_block()
    assert block is not None
    out_index = len(op.inputs) + k
    for i, value in enumerate(op.operands):
        if i != out_index and isinstance(value.type, TensorType):
            if state.root.get(state.lookup(value)) is buffer:
                return False
    for value in state.tensors_in[buffer]:
        for use in value.uses:
            user = ancestor_in(use.operation, block)
            if user is op and not (use.operation is op and use.index == out_index):
                return False
            if user is not None and user is not insert and user is not op:
                if op.is_before_in_block(user) and user.is_before_in_block(insert):
                    return False
    return True


def written_back_in_place(state: BufferState, op: GenericOp, k: int) -> bool:
    """
    May output `k` of `op` (a slice of a tensor whose result is inserted back where it
    came from) be written into the slice's view of that tensor's buffer? If so the
    insert is recorded in `state.written_back`, for `InsertSliceRule` to skip its copy.
    """
    found = _write_back(op, k)
    if found is None:
        return False
    extract, insert = found
    if not state.can_overwrite(insert.dest, insert):
        return False
    buffer = state.root.get(state.lookup(extract.source))
    if buffer is None or not _untouched_meanwhile(state, op, k, buffer, insert):
        return False
    state.written_back.add(insert)
    return True
