"""
Bufferize: tensors become memrefs, function by function, with one buffer plan each.

Level 2 -> level 3 of docs/design/lowering.md. Tensor values are immutable; buffers are
not, so the pass decides for every tensor which buffer holds it and who frees it:

- A `linalg.generic` writes into a fresh buffer, or *in place* into the buffer of an
  input that dies at the generic (same type, read with the output's own indexing map,
  owned by this function, no other live tensor shares it). A `tensor.empty` that only
  names the shape of such an output is never allocated.
- Views share their source's buffer: `collapse_shape`/`expand_shape`/`cast` (of
  contiguous data) and `extract_slice` (a strided `memref.subview`). `insert_slice` writes into
  its destination's buffer when the destination dies there, into a copy otherwise.
- Constant tensors become private `memref.global`s, never freed, never written.
- Ownership: each block owns the buffers it allocates, the results of the `scf` ops
  and calls in it, and the memrefs it carries in as loop arguments. A terminator
  (`scf.yield`, `scf.condition`, `func.return`) hands buffers over: what it yields must
  be a buffer the block owns (a copy is made otherwise: an argument, a global, a view, a
  value from outside, or one yielded twice). Every owned buffer not handed over is freed
  right after its last use (through any view) in its block.

So a function returns fresh buffers its caller owns, a loop frees the value it replaces
each iteration, and no temporary outlives its last use. Copies are `linalg.generic`
ops like any other, so they become loops LLVM can vectorise.
"""

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from mlc import resources
from mlc.diagnostics import op_error

ALIGNMENT = 64


def memref_type(tensor_type: TensorType) -> MemRefType:
    """The contiguous, row-major buffer type that holds a tensor."""
    return MemRefType(tensor_type.element_type, tensor_type.get_shape())


def _convert_type(type_: Attribute) -> Attribute:
    return memref_type(type_) if isinstance(type_, TensorType) else type_


def _is_contiguous(type_: Attribute) -> bool:
    return isinstance(type_, MemRefType) and isinstance(type_.layout, NoneAttr)


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or contains it; None if `op` is outside `block`."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _defining_block(value: SSAValue) -> Block | None:
    return value.owner if isinstance(value.owner, Block) else value.owner.parent_block()


def _not_used_after(value: SSAValue, op: Operation) -> bool:
    """
    True when no use of tensor `value` can run after `op` finishes.

    Conservative: `value` must be defined in `op`'s block and every use must be `op`
    itself, nested in it, or before it in that block (a use in a loop around `op`
    runs again on the next iteration).
    """
    block = op.parent_block()
    if block is None or _defining_block(value) is not block:
        return False
    for use in value.uses:
        user = _ancestor_in(use.operation, block)
        if user is None or (user is not op and not user.is_before_in_block(op)):
            return False
    return True


def _insert_at_start(block: Block, op: Operation) -> None:
    if block.first_op is None:
        block.add_op(op)
    else:
        block.insert_op_before(op, block.first_op)


@dataclass
class _Scope:
    """A new block being filled, and the buffers it owns."""

    block: Block
    owned: list[SSAValue] = field(default_factory=list)
    handed_over: set[SSAValue] = field(default_factory=set)


class _Globals:
    """The `memref.global`s holding constant tensors, one per distinct value."""

    def __init__(self) -> None:
        self.ops: list[memref.GlobalOp] = []
        self._names: dict[tuple[Attribute, Attribute], str] = {}

    def name_for(self, value: DenseIntOrFPElementsAttr, type_: MemRefType) -> str:
        key = (value, type_)
        if key not in self._names:
            name = f"__constant_{len(self._names)}"
            self._names[key] = name
            self.ops.append(
                memref.GlobalOp.get(
                    StringAttr(name), type_, value, constant=UnitAttr(), alignment=ALIGNMENT
                )
            )
        return self._names[key]

    def resource(self, value: DenseResourceAttr, type_: MemRefType) -> str:
        """
        An uninitialised public global named after a `dense_resource` handle: an
        external declaration whose data the JIT binds (`mlc.resources`).
        """
        name = resources.symbol_name(value.resource_handle.data)
        if (value, type_) not in self._names:
            self._names[(value, type_)] = name
            self.ops.append(
                memref.GlobalOp.get(
                    StringAttr(name), type_, UnitAttr(), StringAttr("public"), UnitAttr(), ALIGNMENT
                )
            )
        return name


class _FunctionBufferizer:
    """Builds the memref form of one function; the tensor form is only read."""

    def __init__(self, globals_: _Globals):
        self.globals = globals_
        self.values: dict[SSAValue, SSAValue] = {}  # tensor-level value -> new value
        self.root: dict[SSAValue, SSAValue] = {}  # memref -> the buffer it lives in
        self.writable: set[SSAValue] = set()  # buffers this function may overwrite
        self.tensors_in: defaultdict[SSAValue, list[SSAValue]] = defaultdict(list)
        self.aliases: defaultdict[SSAValue, list[SSAValue]] = defaultdict(list)
        self.deferred_empty: dict[SSAValue, tensor.EmptyOp] = {}
        self.scopes: list[_Scope] = []

    # -- bookkeeping ------------------------------------------------------------

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def emit(self, op: Operation) -> Operation:
        self.scope.block.add_op(op)
        return op

    def lookup(self, value: SSAValue) -> SSAValue:
        if value in self.deferred_empty:
            self._materialize_empty(value)
        return self.values[value]

    def bind(self, old: SSAValue, new: SSAValue, root: SSAValue | None = None) -> None:
        """Map `old` to `new`, which lives in buffer `root` (itself by default)."""
        self.values[old] = new
        if isinstance(new.type, MemRefType):
            buffer = new if root is None else root
            self.root[new] = buffer
            self.tensors_in[buffer].append(old)
            if new not in self.aliases[buffer]:
                self.aliases[buffer].append(new)

    def new_buffer(self, value: SSAValue, owned: bool = True) -> None:
        """`value` is a buffer of its own, owned by the current block if `owned`."""
        self.root[value] = value
        if value not in self.aliases[value]:
            self.aliases[value].append(value)
        if owned:
            self.scope.owned.append(value)
            self.writable.add(value)

    def can_overwrite(self, old: SSAValue, at: Operation) -> bool:
        """May `at` write into the buffer holding tensor `old`, destroying it?"""
        new = self.values.get(old)
        if new is None or old in self.deferred_empty:
            return False
        buffer = self.root.get(new)
        if buffer is None or buffer not in self.writable:
            return False
        if buffer not in self.scope.owned:
            return False
        return all(_not_used_after(t, at) for t in self.tensors_in[buffer])

    # -- allocation and copies --------------------------------------------------

    def dims_of(self, source: SSAValue) -> list[SSAValue]:
        """Index values for the dynamic dims of memref `source`."""
        type_ = source.type
        assert isinstance(type_, MemRefType)
        dims: list[SSAValue] = []
        for i, size in enumerate(type_.get_shape()):
            if size == DYNAMIC_INDEX:
                index = self.emit(arith.ConstantOp(IntegerAttr(i, IndexType())))
                dims.append(self.emit(memref.DimOp(source, index.results[0])).results[0])
        return dims

    def alloc(self, type_: MemRefType, dynamic_sizes: Sequence[SSAValue]) -> SSAValue:
        op = self.emit(memref.AllocOp(dynamic_sizes, [], type_, IntegerAttr(ALIGNMENT, i64)))
        self.new_buffer(op.results[0])
        return op.results[0]

    def copy(self, source: SSAValue, shape_type: TensorType | MemRefType) -> SSAValue:
        """A fresh, contiguous, owned copy of memref `source`."""
        target_type = MemRefType(shape_type.element_type, shape_type.get_shape())
        target = self.alloc(target_type, self.dims_of(source))
        self.emit(copy_op(source, target))
        return target

    def _materialize_empty(self, old: SSAValue) -> None:
        empty = self.deferred_empty.pop(old)
        sizes = [self.lookup(size) for size in empty.dynamic_sizes]
        buffer = self.alloc(memref_type(empty.tensor.type), sizes)
        self.bind(old, buffer)

    def hand_over(self, old: SSAValue) -> SSAValue:
        """A buffer holding `old` that the current block owns and gives away."""
        new = self.lookup(old)
        if (
            self.root.get(new) is new
            and new in self.scope.owned
            and new not in self.scope.handed_over
            and _is_contiguous(new.type)
        ):
            result = new
        else:
            result = self.copy(new, old.type)
        self.scope.handed_over.add(result)
        return result

    def handed_over(self, operands: Sequence[SSAValue]) -> list[SSAValue]:
        """The operands of a terminator: its tensors become buffers it hands over."""
        return [
            self.hand_over(v) if isinstance(v.type, TensorType) else self.lookup(v)
            for v in operands
        ]

    def pass_into(self, old: SSAValue, at: Operation) -> SSAValue:
        """A buffer for `old` that the op `at` (a loop) takes ownership of."""
        new = self.lookup(old)
        if self.root.get(new) is new and self.can_overwrite(old, at) and _is_contiguous(new.type):
            self.scope.owned.remove(new)
            return new
        copied = self.copy(new, old.type)
        self.scope.owned.remove(copied)
        return copied

    # -- blocks -----------------------------------------------------------------

    def fill_block(
        self,
        old: Block,
        new: Block,
        owned_args: Sequence[SSAValue] = (),
    ) -> None:
        """Emit the memref form of `old` into `new` (whose args are already mapped)."""
        self.scopes.append(_Scope(new))
        for arg in owned_args:
            self.new_buffer(arg)
        for op in old.ops:
            self.convert(op)
        self.free_dead_buffers()
        self.scopes.pop()

    def free_dead_buffers(self) -> None:
        """Free each owned buffer not handed over, right after its last use."""
        block = self.scope.block
        for buffer in self.scope.owned:
            if buffer in self.scope.handed_over:
                continue
            last = buffer.owner if isinstance(buffer.owner, Operation) else None
            for alias in self.aliases[buffer]:
                for use in alias.uses:
                    user = _ancestor_in(use.operation, block)
                    if user is not None and (last is None or last.is_before_in_block(user)):
                        last = user
            dealloc = memref.DeallocOp.get(buffer)
            if last is None:  # an unused block argument
                _insert_at_start(block, dealloc)
            elif last.has_trait(IsTerminator):
                block.insert_op_before(dealloc, last)
            else:
                block.insert_op_after(dealloc, last)

    def new_block_like(self, old: Block) -> Block:
        new = Block(arg_types=[_convert_type(arg.type) for arg in old.args])
        for old_arg, new_arg in zip(old.args, new.args):
            new_arg.name_hint = old_arg.name_hint
            self.bind(old_arg, new_arg)
        return new

    # -- ops --------------------------------------------------------------------

    def convert(self, op: Operation) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
        if tensors or op.regions:
            raise op_error(op, f"bufferize: no rule for '{op.name}' on tensors")
        self.convert_default(op)

    def convert_default(self, op: Operation) -> None:
        """Ops without tensors are copied, their operands renamed."""
        clone = op.clone(value_mapper={v: self.lookup(v) for v in op.operands})
        self.emit(clone)
        for old, new in zip(op.results, clone.results):
            self.bind(old, new)


def copy_op(source: SSAValue, target: SSAValue) -> GenericOp:
    """`target[...] = source[...]` as a parallel `linalg.generic`."""
    source_type = source.type
    target_type = target.type
    assert isinstance(source_type, MemRefType) and isinstance(target_type, MemRefType)
    rank = target_type.get_num_dims()
    body = Block(arg_types=[source_type.element_type, target_type.element_type])
    body.add_op(YieldOp(body.args[0]))
    identity = AffineMapAttr(AffineMap.identity(rank))
    return GenericOp(
        [source],
        [target],
        Region(body),
        [identity, identity],
        [IteratorTypeAttr.parallel()] * rank,
    )


# ---------------------------------------------------------------------------
# One rule per tensor-level op
# ---------------------------------------------------------------------------


def _constant(b: _FunctionBufferizer, op: arith.ConstantOp) -> None:
    if not isinstance(op.result.type, TensorType):
        b.convert_default(op)
        return
    value = op.value
    type_ = memref_type(op.result.type)
    if isinstance(value, DenseResourceAttr):
        name = b.globals.resource(value, type_)
    elif isinstance(value, DenseIntOrFPElementsAttr):
        name = b.globals.name_for(value, type_)
    else:
        raise op_error(
            op, "bufferize: only dense and dense_resource tensor constants are supported"
        )
    new = b.emit(memref.GetGlobalOp(name, type_)).results[0]
    b.bind(op.result, new)


def _empty(b: _FunctionBufferizer, op: tensor.EmptyOp) -> None:
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
        b.deferred_empty[op.tensor] = op  # allocated by the generic, if it must
        return
    sizes = [b.lookup(size) for size in op.dynamic_sizes]
    b.bind(op.tensor, b.alloc(memref_type(op.tensor.type), sizes))


def _dim(b: _FunctionBufferizer, op: tensor.DimOp) -> None:
    new = b.emit(memref.DimOp(b.lookup(op.source), b.lookup(op.index)))
    b.bind(op.result, new.results[0])


def _extract(b: _FunctionBufferizer, op: tensor.ExtractOp) -> None:
    new = b.emit(memref.LoadOp.get(b.lookup(op.tensor), [b.lookup(i) for i in op.indices]))
    b.bind(op.result, new.results[0])


def _from_elements(b: _FunctionBufferizer, op: tensor.FromElementsOp) -> None:
    """A small buffer stored element by element (a run-time shape, for instance)."""
    type_ = memref_type(op.result.type)
    target = b.alloc(type_, [])
    shape = type_.get_shape()
    for flat, element in enumerate(op.elements):
        position: list[int] = []
        for size in reversed(shape):  # the row-major position of element `flat`
            position.insert(0, flat % size)
            flat //= size
        indices = [
            b.emit(arith.ConstantOp(IntegerAttr(i, IndexType()))).results[0] for i in position
        ]
        b.emit(memref.StoreOp.get(b.lookup(element), target, indices))
    b.bind(op.result, target)


def _cast(b: _FunctionBufferizer, op: tensor.CastOp) -> None:
    source = _contiguous_source(b, op.source)
    new = b.emit(memref.CastOp.build(operands=[source], result_types=[memref_type(op.result.type)]))
    b.bind(op.result, new.results[0], b.root[source])


def _contiguous_source(b: _FunctionBufferizer, old: SSAValue) -> SSAValue:
    new = b.lookup(old)
    return new if _is_contiguous(new.type) else b.copy(new, old.type)


def _collapse(b: _FunctionBufferizer, op: tensor.CollapseShapeOp) -> None:
    source = _contiguous_source(b, op.src)
    new = b.emit(
        memref.CollapseShapeOp.build(
            operands=[source],
            result_types=[memref_type(op.result.type)],
            properties={"reassociation": op.reassociation},
        )
    )
    b.bind(op.result, new.results[0], b.root[source])


def _expand(b: _FunctionBufferizer, op: tensor.ExpandShapeOp) -> None:
    source = _contiguous_source(b, op.src)
    new = b.emit(
        memref.ExpandShapeOp.build(
            operands=[source, [b.lookup(v) for v in op.dynamic_output_shape]],
            result_types=[memref_type(op.result.type)],
            properties={
                "reassociation": op.reassociation,
                "static_output_shape": op.static_output_shape,
            },
        )
    )
    b.bind(op.result, new.results[0], b.root[source])


def _strides_and_offset(type_: MemRefType) -> tuple[Sequence[int | None], int | None]:
    """Element strides and offset of a memref (None where dynamic)."""
    layout = type_.layout
    if isinstance(layout, StridedLayoutAttr):
        return layout.get_strides(), layout.get_offset()
    return MemRefType.strides_for_shape(type_.get_shape()), 0


def _subview(
    b: _FunctionBufferizer,
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
    view = b.emit(
        memref.SubviewOp(
            source,
            [b.lookup(v) for v in op.offsets],
            [b.lookup(v) for v in op.sizes],
            [b.lookup(v) for v in op.strides],
            op.static_offsets,
            op.static_sizes,
            op.static_strides,
            result_type,
        )
    )
    return view.results[0]


def _extract_slice(b: _FunctionBufferizer, op: tensor.ExtractSliceOp) -> None:
    source = b.lookup(op.source)
    if op.result.type.get_num_dims() != source.type.get_num_dims():
        raise op_error(op, "bufferize: rank-reducing slices are not supported")
    view = _subview(b, source, op, op.result.type.get_shape())
    b.bind(op.result, view, b.root[source])


def _insert_slice(b: _FunctionBufferizer, op: tensor.InsertSliceOp) -> None:
    dest = b.lookup(op.dest)
    source_buffer = b.root.get(b.lookup(op.source))
    if (
        b.can_overwrite(op.dest, op)
        and _is_contiguous(dest.type)
        and source_buffer is not b.root[dest]
    ):
        target = dest
    else:
        target = b.copy(dest, op.dest.type)
    if op.source.type.get_num_dims() != target.type.get_num_dims():
        raise op_error(op, "bufferize: rank-reducing slices are not supported")
    view = _subview(b, target, op, op.source.type.get_shape())
    b.emit(copy_op(b.lookup(op.source), view))
    b.bind(op.result, target, b.root[target])


def _generic(b: _FunctionBufferizer, op: GenericOp) -> None:
    if not op.res:
        raise op_error(op, "bufferize: expected a linalg.generic on tensors")
    maps = op.indexing_maps.data
    inputs = list(op.inputs)
    n_inputs = len(inputs)
    new_inputs = [b.lookup(v) for v in inputs]
    taken: set[SSAValue] = set()
    targets: list[SSAValue] = []
    for k, (out, result) in enumerate(zip(op.outputs, op.res, strict=True)):
        out_is_read = bool(op.body.block.args[n_inputs + k].uses)
        out_map = maps[n_inputs + k]
        target: SSAValue | None = None
        if out in b.deferred_empty and not out_is_read:
            target = _steal_input(b, op, out_map, memref_type(result.type), taken)
            if target is not None:
                del b.deferred_empty[out]
        if target is None:
            current = b.lookup(out)
            if (
                b.can_overwrite(out, op)
                and _is_contiguous(current.type)
                and current not in taken
                and not _reads_elsewhere(b, op, b.root[current], out_map)
            ):
                target = current
            elif out_is_read:
                target = b.copy(current, out.type)
            else:
                target = b.alloc(memref_type(result.type), b.dims_of(current))
        taken.add(target)
        targets.append(target)
    body = b.new_block_like(op.body.block)
    b.fill_block(op.body.block, body)
    b.emit(
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
        b.bind(result, target, b.root[target])


def _steal_input(
    b: _FunctionBufferizer,
    op: GenericOp,
    out_map: AffineMapAttr,
    out_type: MemRefType,
    taken: set[SSAValue],
) -> SSAValue | None:
    """An input buffer the generic can write its output into, element for element."""
    maps = op.indexing_maps.data
    for i, old in enumerate(op.inputs):
        if not isinstance(old.type, TensorType) or maps[i] != out_map:
            continue
        new = b.lookup(old)
        if new.type != out_type or new in taken or not b.can_overwrite(old, op):
            continue
        if not _reads_elsewhere(b, op, b.root[new], out_map):
            return new
    return None


def _reads_elsewhere(
    b: _FunctionBufferizer, op: GenericOp, buffer: SSAValue, out_map: AffineMapAttr
) -> bool:
    """
    Does `op` read `buffer` at other elements than the one its output writes?

    Writing an output in place is safe only if each input in the same buffer is read
    through the output's own indexing map and nothing reads the buffer from the body.
    """
    maps = op.indexing_maps.data
    for i, old in enumerate(op.inputs):
        if isinstance(old.type, TensorType) and b.root.get(b.lookup(old)) is buffer:
            if maps[i] != out_map:
                return True
    block = op.parent_block()
    return any(
        use.operation is not op and _ancestor_in(use.operation, block) is op
        for t in b.tensors_in[buffer]
        for use in t.uses
    )


def _for(b: _FunctionBufferizer, op: scf.ForOp) -> None:
    inits = [
        b.pass_into(v, op) if isinstance(v.type, TensorType) else b.lookup(v) for v in op.iter_args
    ]
    old = op.body.block
    body = b.new_block_like(old)
    b.fill_block(old, body, _tensor_args(old, body, skip=1))
    new = b.emit(
        scf.ForOp(b.lookup(op.lb), b.lookup(op.ub), b.lookup(op.step), inits, Region(body))
    )
    _bind_owned_results(b, op, new)


def _while(b: _FunctionBufferizer, op: scf.WhileOp) -> None:
    inits = [
        b.pass_into(v, op) if isinstance(v.type, TensorType) else b.lookup(v) for v in op.arguments
    ]
    regions = []
    for region in (op.before_region, op.after_region):
        old = region.block
        new_block = b.new_block_like(old)
        b.fill_block(old, new_block, _tensor_args(old, new_block))
        regions.append(Region(new_block))
    result_types = [_convert_type(r.type) for r in op.results]
    new = b.emit(scf.WhileOp(inits, result_types, regions[0], regions[1]))
    _bind_owned_results(b, op, new)


def _if(b: _FunctionBufferizer, op: scf.IfOp) -> None:
    regions = []
    for region in (op.true_region, op.false_region):
        if not region.blocks:
            regions.append(Region())
            continue
        new_block = Block()
        b.fill_block(region.block, new_block)
        regions.append(Region(new_block))
    result_types = [_convert_type(r.type) for r in op.results]
    new = b.emit(scf.IfOp(b.lookup(op.cond), result_types, regions[0], regions[1]))
    _bind_owned_results(b, op, new)


def _tensor_args(old: Block, new: Block, skip: int = 0) -> list[SSAValue]:
    return [
        new.args[i] for i in range(skip, len(old.args)) if isinstance(old.args[i].type, TensorType)
    ]


def _bind_owned_results(b: _FunctionBufferizer, old: Operation, new: Operation) -> None:
    for old_result, new_result in zip(old.results, new.results, strict=True):
        b.bind(old_result, new_result)
        if isinstance(new_result.type, MemRefType):
            b.new_buffer(new_result)


def _yield(b: _FunctionBufferizer, op: scf.YieldOp) -> None:
    b.emit(scf.YieldOp(*b.handed_over(op.operands)))


def _condition(b: _FunctionBufferizer, op: scf.ConditionOp) -> None:
    b.emit(scf.ConditionOp(b.lookup(op.condition), *b.handed_over(op.args)))


def _return(b: _FunctionBufferizer, op: func.ReturnOp) -> None:
    b.emit(func.ReturnOp(*b.handed_over(op.operands)))


def _call(b: _FunctionBufferizer, op: func.CallOp) -> None:
    new = b.emit(
        func.CallOp(
            op.callee,
            [b.lookup(v) for v in op.arguments],
            [_convert_type(r.type) for r in op.results],
        )
    )
    _bind_owned_results(b, op, new)


_HANDLERS: dict[type[Operation], Callable[[_FunctionBufferizer, Operation], None]] = {
    arith.ConstantOp: _constant,
    tensor.EmptyOp: _empty,
    tensor.DimOp: _dim,
    tensor.CastOp: _cast,
    tensor.ExtractOp: _extract,
    tensor.FromElementsOp: _from_elements,
    tensor.CollapseShapeOp: _collapse,
    tensor.ExpandShapeOp: _expand,
    tensor.ExtractSliceOp: _extract_slice,
    tensor.InsertSliceOp: _insert_slice,
    GenericOp: _generic,
    scf.ForOp: _for,
    scf.WhileOp: _while,
    scf.IfOp: _if,
    scf.YieldOp: _yield,
    scf.ConditionOp: _condition,
    func.ReturnOp: _return,
    func.CallOp: _call,
}  # type: ignore[assignment]


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


def _signature(function_type: FunctionType) -> FunctionType:
    return FunctionType.from_lists(
        [_convert_type(t) for t in function_type.inputs],
        [_convert_type(t) for t in function_type.outputs],
    )


class BufferizePass(ModulePass):
    """Tensors to memrefs for every function of the module (see the module docstring)."""

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        globals_ = _Globals()
        new_bodies: list[tuple[func.FuncOp, Block]] = []
        for function in op.walk():
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            if len(function.body.blocks) != 1:
                raise op_error(
                    function, "bufferize: functions with several blocks are not supported"
                )
            bufferizer = _FunctionBufferizer(globals_)
            old = function.body.block
            new = bufferizer.new_block_like(old)
            bufferizer.fill_block(old, new)
            new_bodies.append((function, new))
        # Nothing is changed until every function has been converted.
        for function in op.walk():
            if isinstance(function, func.FuncOp):
                function.function_type = _signature(function.function_type)
        for function, new in new_bodies:
            old = function.body.block
            function.body.detach_block(old)
            function.body.add_block(new)
            old.erase(safe_erase=False)
        for global_op in reversed(globals_.ops):
            _insert_at_start(op.body.block, global_op)
