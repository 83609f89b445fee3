"""
One `bufferize` rule per tensor-level op, as MLIR's BufferizableOpInterface: how the op
becomes memref ops, which operands it reads, which buffers it may write in place.

`RULES` maps an op class to its rule; `BufferState.convert` looks an op up there (ops
without tensors have no rule and are cloned). The rules of the tensor ops are here:

- constants become `memref.get_global`s of private globals;
- `tensor.empty` is an allocation, or none when a generic writes its output in place;
- views (`cast`, `collapse_shape`, `expand_shape`, `extract_slice`) share their source's
  buffer (a contiguous copy first where the view needs one);
- `insert_slice` copies its source into its destination's buffer, or a copy of it (none
  where a generic computed the source in its place: `bufferize_slices`);
- `linalg.generic` writes into an input that dies there, its output's buffer, or a
  fresh one.

Control flow, calls and terminators are in `bufferize_control_flow`.
"""

from abc import abstractmethod
from collections.abc import Sequence

from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StridedLayoutAttr,
    TensorType,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, Region, SSAValue

from mlc.diagnostics import op_error
from mlc.lowering.linalg.bufferize_control_flow import CONTROL_FLOW_RULES
from mlc.lowering.linalg.bufferize_slices import written_back_in_place
from mlc.lowering.linalg.bufferize_state import (
    BufferizableOp,
    BufferState,
    ancestor_in,
    convert_type,
    is_contiguous,
    memref_type,
)


class ConstantRule(BufferizableOp):
    """A tensor constant is a private global (a `dense_resource` a public one)."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, arith.ConstantOp)
        if not isinstance(op.result.type, TensorType):
            state.clone(op)
            return
        value = op.value
        type_ = memref_type(op.result.type)
        if isinstance(value, DenseResourceAttr):
            name = state.globals.resource(value, type_, op.location)
        elif isinstance(value, DenseIntOrFPElementsAttr):
            name = state.globals.name_for(value, type_, op.location)
        else:
            raise op_error(
                op, "bufferize: only dense and dense_resource tensor constants are supported"
            )
        new = state.emit(memref.GetGlobalOp(name, type_)).results[0]
        state.bind(op.result, new)


class EmptyRule(BufferizableOp):
    """An allocation, deferred when the empty only names a generic's output shape."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.EmptyOp)
        uses = list(op.tensor.uses)
        if not uses:
            return
        user = uses[0].operation
        if (
            len(uses) == 1
            and isinstance(user, GenericOp)
            and user.parent_block() is op.parent_block()
            and uses[0].index >= len(user.inputs)
        ):
            state.deferred_empty[op.tensor] = op  # allocated by the generic, if it must
            return
        sizes = [state.lookup(size) for size in op.dynamic_sizes]
        state.bind(op.tensor, state.alloc(memref_type(op.tensor.type), sizes))


class DimRule(BufferizableOp):
    """`memref.dim` of the source's buffer (its shape only, no element)."""

    def reads(self, op: Operation, index: int) -> bool:
        return False

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.DimOp)
        new = state.emit(memref.DimOp(state.lookup(op.source), state.lookup(op.index)))
        state.bind(op.result, new.results[0])


class ExtractRule(BufferizableOp):
    """A `memref.load`."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.ExtractOp)
        indices = [state.lookup(i) for i in op.indices]
        new = state.emit(memref.LoadOp.get(state.lookup(op.tensor), indices))
        state.bind(op.result, new.results[0])


class InsertRule(BufferizableOp):
    """A `memref.store` into the destination's buffer (in place), or into a copy."""

    DEST = 1  # the operand index of `dest`

    def writes(self, op: Operation, index: int) -> bool:
        return index == self.DEST

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.InsertOp)
        dest = state.lookup(op.dest)
        target = dest if state.may_overwrite(op, self.DEST) else state.copy(dest, op.dest.type)
        indices = [state.lookup(i) for i in op.indices]
        state.emit(memref.StoreOp.get(state.lookup(op.scalar), target, indices))
        state.bind(op.result, target, state.root[target])


class FromElementsRule(BufferizableOp):
    """A small buffer stored element by element (a run-time shape, for instance)."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.FromElementsOp)
        type_ = memref_type(op.result.type)
        target = state.alloc(type_, [])
        shape = type_.get_shape()
        for flat, element in enumerate(op.elements):
            position: list[int] = []
            for size in reversed(shape):  # the row-major position of element `flat`
                position.insert(0, flat % size)
                flat //= size
            indices = [
                state.emit(arith.ConstantOp(IntegerAttr(i, IndexType()))).results[0]
                for i in position
            ]
            state.emit(memref.StoreOp.get(state.lookup(element), target, indices))
        state.bind(op.result, target)


# -- views ----------------------------------------------------------------------


class ViewRule(BufferizableOp):
    """A view shares its source's buffer and reads none of its elements."""

    def reads(self, op: Operation, index: int) -> bool:
        return False

    def bufferize(self, state: BufferState, op: Operation) -> None:
        source = self.contiguous_source(state, op.operands[0])
        new = state.emit(self.view(state, op, source))
        state.bind(op.results[0], new.results[0], state.root[source])

    @staticmethod
    def contiguous_source(state: BufferState, old: SSAValue) -> SSAValue:
        new = state.lookup(old)
        return new if is_contiguous(new.type) else state.copy(new, old.type)

    @abstractmethod
    def view(self, state: BufferState, op: Operation, source: SSAValue) -> Operation:
        """The memref view of `source` that `op` becomes."""


class CastRule(ViewRule):
    def view(self, state: BufferState, op: Operation, source: SSAValue) -> Operation:
        assert isinstance(op, tensor.CastOp)
        return memref.CastOp.build(operands=[source], result_types=[memref_type(op.dest.type)])


class CollapseShapeRule(ViewRule):
    def view(self, state: BufferState, op: Operation, source: SSAValue) -> Operation:
        assert isinstance(op, tensor.CollapseShapeOp)
        return memref.CollapseShapeOp.build(
            operands=[source],
            result_types=[memref_type(op.result.type)],
            properties={"reassociation": op.reassociation},
        )


class ExpandShapeRule(ViewRule):
    def view(self, state: BufferState, op: Operation, source: SSAValue) -> Operation:
        assert isinstance(op, tensor.ExpandShapeOp)
        return memref.ExpandShapeOp.build(
            operands=[source, [state.lookup(v) for v in op.dynamic_output_shape]],
            result_types=[memref_type(op.result.type)],
            properties={
                "reassociation": op.reassociation,
                "static_output_shape": op.static_output_shape,
            },
        )


def _strides_and_offset(type_: MemRefType) -> tuple[Sequence[int | None], int | None]:
    """Element strides and offset of a memref (None where dynamic)."""
    layout = type_.layout
    if isinstance(layout, StridedLayoutAttr):
        return layout.get_strides(), layout.get_offset()
    return MemRefType.strides_for_shape(type_.get_shape()), 0


def subview(
    state: BufferState,
    source: SSAValue,
    op: tensor.ExtractSliceOp | tensor.InsertSliceOp,
    shape: Sequence[int],
) -> SSAValue:
    """A strided view of `source` at `op`'s offsets, sizes and strides."""
    source_type = source.type
    assert isinstance(source_type, MemRefType)
    source_strides, source_offset = _strides_and_offset(source_type)
    offsets = op.static_offsets.get_values()
    steps = op.static_strides.get_values()
    strides: list[int | None] = []
    offset: int | None = source_offset
    for stride, start, step in zip(source_strides, offsets, steps, strict=True):
        known = stride is not None
        strides.append(stride * step if known and step != DYNAMIC_INDEX else None)
        if offset is None or not known or start == DYNAMIC_INDEX:
            offset = None
        else:
            offset += start * stride
    result_type = MemRefType(source_type.element_type, shape, StridedLayoutAttr(strides, offset))
    view = state.emit(
        memref.SubviewOp(
            source,
            [state.lookup(v) for v in op.offsets],
            [state.lookup(v) for v in op.sizes],
            [state.lookup(v) for v in op.strides],
            op.static_offsets,
            op.static_sizes,
            op.static_strides,
            result_type,
        )
    )
    return view.results[0]


class ExtractSliceRule(BufferizableOp):
    """A strided `memref.subview` of the source's buffer."""

    def reads(self, op: Operation, index: int) -> bool:
        return False

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.ExtractSliceOp)
        source = state.lookup(op.source)
        if op.result.type.get_num_dims() != source.type.get_num_dims():
            raise op_error(op, "bufferize: rank-reducing slices are not supported")
        view = subview(state, source, op, op.result.type.get_shape())
        state.bind(op.result, view, state.root[source])


class InsertSliceRule(BufferizableOp):
    """The source copied into a subview of the destination's buffer, or of a copy."""

    DEST = 1  # the operand index of `dest`

    def writes(self, op: Operation, index: int) -> bool:
        return index == self.DEST

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, tensor.InsertSliceOp)
        dest = state.lookup(op.dest)
        if op in state.written_back:  # the source was computed in its place in dest
            state.bind(op.result, dest, state.root[dest])
            return
        source_buffer = state.root.get(state.lookup(op.source))
        if (
            state.may_overwrite(op, self.DEST)
            and is_contiguous(dest.type)
            and source_buffer is not state.root[dest]
        ):
            target = dest
        else:
            target = state.copy(dest, op.dest.type)
        if op.source.type.get_num_dims() != target.type.get_num_dims():
            raise op_error(op, "bufferize: rank-reducing slices are not supported")
        view = subview(state, target, op, op.source.type.get_shape())
        state.emit_copy(state.lookup(op.source), view)
        state.bind(op.result, target, state.root[target])


# -- linalg.generic -------------------------------------------------------------


class GenericRule(BufferizableOp):
    """
    A generic on memrefs. Each output goes into the buffer of an input that dies here
    (read element for element like the output, so a deferred `tensor.empty` is never
    allocated), its own buffer when it dies here, a copy when the body reads it, or a
    fresh allocation.
    """

    def reads(self, op: Operation, index: int) -> bool:
        assert isinstance(op, GenericOp)
        return index < len(op.inputs) or bool(op.body.block.args[index].uses)

    def writes(self, op: Operation, index: int) -> bool:
        assert isinstance(op, GenericOp)
        maps = op.indexing_maps.data
        n_inputs = len(op.inputs)
        return index >= n_inputs or maps[index] in maps[n_inputs:]

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, GenericOp)
        if not op.res:
            raise op_error(op, "bufferize: expected a linalg.generic on tensors")
        new_inputs = [state.lookup(v) for v in op.inputs]
        taken: set[SSAValue] = set()
        targets = [self.target(state, op, k, taken) for k in range(len(op.outputs))]
        body = state.new_block_like(op.body.block)
        state.fill_block(op.body.block, body)
        state.emit(
            GenericOp(
                new_inputs,
                targets,
                Region(body),
                op.indexing_maps,
                op.iterator_types,
                doc=op.doc,
                library_call=op.library_call,
            )
        )
        for result, target in zip(op.res, targets, strict=True):
            state.bind(result, target, state.root[target])

    def target(self, state: BufferState, op: GenericOp, k: int, taken: set[SSAValue]) -> SSAValue:
        """The buffer output `k` is written into (not one already `taken`)."""
        index = len(op.inputs) + k
        out, result = op.outputs[k], op.res[k]
        out_is_read = self.reads(op, index)
        out_map = op.indexing_maps.data[index]
        target: SSAValue | None = None
        if out in state.deferred_empty and not out_is_read:
            target = self.steal_input(state, op, result, out_map, taken)
            if target is not None:
                del state.deferred_empty[out]
        if target is None:
            current = state.lookup(out)
            if current not in taken and written_back_in_place(state, op, k):
                target = current
            elif (
                state.may_overwrite(op, index)
                and is_contiguous(current.type)
                and current not in taken
                and not reads_elsewhere(state, op, state.root[current], out_map)
            ):
                target = current
            elif out_is_read:
                target = state.copy(current, out.type)
            else:
                target = state.alloc(memref_type(result.type), state.dims_of(current))
        taken.add(target)
        return target

    @staticmethod
    def steal_input(
        state: BufferState,
        op: GenericOp,
        result: SSAValue,
        out_map: AffineMapAttr,
        taken: set[SSAValue],
    ) -> SSAValue | None:
        """
        An input buffer the generic can write its output into, element for element:
        the donated argument the result is returned in first, then a temporary, then
        another donated argument (which then needs a copy at the return; never for a
        result the function returns itself, which would be copied out of it).
        """
        maps = op.indexing_maps.data
        out_type = convert_type(result.type)
        candidates = [
            i
            for i, old in enumerate(op.inputs)
            if isinstance(old.type, TensorType) and maps[i] == out_map
        ]
        wanted = state.returned_in(result)
        donated = set(state.donated.values())
        returned_as_is = state.returned_as_is(result)  # a donated buffer would be copied out

        def preference(i: int) -> int:
            root = state.root.get(state.lookup(op.inputs[i]))
            return 0 if root is not None and root is wanted else 2 if root in donated else 1

        for i in sorted(candidates, key=preference) if state.donated else candidates:
            new = state.lookup(op.inputs[i])
            if returned_as_is and preference(i) == 2:
                continue
            if new.type != out_type or new in taken or not state.may_overwrite(op, i):
                continue
            if not reads_elsewhere(state, op, state.root[new], out_map):
                return new
        return None


def reads_elsewhere(
    state: BufferState, op: GenericOp, buffer: SSAValue, out_map: AffineMapAttr
) -> bool:
    """
    Does `op` read `buffer` at other elements than the one its output writes?

    Writing an output in place is safe only if each input in the same buffer is read
    through the output's own indexing map and nothing reads the buffer from the body.
    """
    maps = op.indexing_maps.data
    for i, old in enumerate(op.inputs):
        if isinstance(old.type, TensorType) and state.root.get(state.lookup(old)) is buffer:
            if maps[i] != out_map:
                return True
    block = op.parent_block()
    assert block is not None
    return any(
        use.operation is not op and ancestor_in(use.operation, block) is op
        for t in state.tensors_in[buffer]
        for use in t.uses
    )


RULES: dict[type[Operation], BufferizableOp] = {
    arith.ConstantOp: ConstantRule(),
    tensor.EmptyOp: EmptyRule(),
    tensor.DimOp: DimRule(),
    tensor.CastOp: CastRule(),
    tensor.ExtractOp: ExtractRule(),
    tensor.InsertOp: InsertRule(),
    tensor.FromElementsOp: FromElementsRule(),
    tensor.CollapseShapeOp: CollapseShapeRule(),
    tensor.ExpandShapeOp: ExpandShapeRule(),
    tensor.ExtractSliceOp: ExtractSliceRule(),
    tensor.InsertSliceOp: InsertSliceRule(),
    GenericOp: GenericRule(),
    **CONTROL_FLOW_RULES,
}
