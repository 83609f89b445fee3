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


def written_back_in_place(state: BufferState, op: GenericOp, k: int) -> bool:
    """
    May output `k` of `op` (a slice of a tensor whose result is inserted back where it
    came from) be written into the slice's view of that tensor's buffer? If so the
    insert is recorded in `state.written_back`, for `InsertSliceRule` to skip its copy.
    """
    out, result = op.outputs[k], op.res[k]
    extract = out.owner
    if not isinstance(extract, tensor.ExtractSliceOp) or out.uses.get_length() != 1:
        return False
    if result.uses.get_length() != 1:
        return False
    insert = next(iter(result.uses)).operation
    block = op.parent_block()
    if (
        not isinstance(insert, tensor.InsertSliceOp)
        or insert.source is not result
        or insert.dest is not extract.source
        or insert.parent_block() is not block
        or block is None
        or not _same_slice(extract, insert)
        or not state.can_overwrite(insert.dest, insert)
    ):
        return False
    buffer = state.root.get(state.lookup(extract.source))
    if buffer is None:
        return False
    # The generic reads no other part of the buffer, and nothing uses the buffer between
    # the generic and the insert (`can_overwrite` saw to the uses after it).
    for i, value in enumerate(op.operands):
        if i == len(op.inputs) + k or not isinstance(value.type, TensorType):
            continue
        if state.root.get(state.lookup(value)) is buffer:
            return False
    for value in state.tensors_in[buffer]:
        for use in value.uses:
            user = ancestor_in(use.operation, block)
            if user is None or user is insert or user is extract:
                continue
            if user is op:
                if use.operation is op and use.index == len(op.inputs) + k:
                    continue
                return False
            if op.is_before_in_block(user) and user.is_before_in_block(insert):
                return False
    state.written_back.add(insert)
    return True
