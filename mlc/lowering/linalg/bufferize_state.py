"""
The state of `bufferize` in one function: which buffer holds each tensor, who owns it,
and whether an op may overwrite it.

The rules of `bufferize_rules` read and extend it as they bufferize op after op:

- `values` maps each tensor-level value to its new value, `root` each memref to the
  buffer it lives in (a view lives in its source's), `aliases` a buffer to its views.
- A scope is a new block being filled and the buffers it owns; `free_dead_buffers`
  frees what it does not hand over, right after its last use.
- `may_overwrite(op, index)` is the in-place decision: the rule of `op` must say it
  writes that operand, and the buffer must be owned here and hold no tensor used later.

Every op a rule emits takes the location of the op being bufferized (`convert` sets it),
a dealloc the location of the op whose buffer it frees.
"""

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    UnknownLoc,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from mlc import resources
from mlc.diagnostics import op_error
from mlc.lowering.support.locations import located_builder

ALIGNMENT = 64


def memref_type(tensor_type: TensorType) -> MemRefType:
    """The contiguous, row-major buffer type that holds a tensor."""
    return MemRefType(tensor_type.element_type, tensor_type.get_shape())


def convert_type(type_: Attribute) -> Attribute:
    """A tensor type's buffer type; any other type unchanged."""
    return memref_type(type_) if isinstance(type_, TensorType) else type_


def is_contiguous(type_: Attribute) -> bool:
    """Whether `type_` is an identity-layout memref (not a strided view)."""
    return isinstance(type_, MemRefType) and isinstance(type_.layout, NoneAttr)


def ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or contains it; None if `op` is outside `block`."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _defining_block(value: SSAValue) -> Block | None:
    return value.owner if isinstance(value.owner, Block) else value.owner.parent_block()


def not_used_after(value: SSAValue, op: Operation) -> bool:
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
        user = ancestor_in(use.operation, block)
        if user is None or (user is not op and not user.is_before_in_block(op)):
            return False
    return True


def copy_op(source: SSAValue, target: SSAValue, location: Attribute) -> GenericOp:
    """`target[...] = source[...]` as a parallel `linalg.generic` at `location`."""
    source_type = source.type
    target_type = target.type
    assert isinstance(source_type, MemRefType) and isinstance(target_type, MemRefType)
    rank = target_type.get_num_dims()
    body = Block(arg_types=[source_type.element_type, target_type.element_type])
    located_builder(InsertPoint.at_end(body), location).insert(YieldOp(body.args[0]))
    identity = AffineMapAttr(AffineMap.identity(rank))
    return GenericOp(
        [source],
        [target],
        Region(body),
        [identity, identity],
        [IteratorTypeAttr.parallel()] * rank,
    )


class BufferizableOp(ABC):
    """
    How the ops of one class become memref ops: MLIR's BufferizableOpInterface, in small.

    `reads` and `writes` speak of the op's tensor operands by index: does the op read
    the operand's elements, and may it write its result into the operand's buffer (in
    place, when `BufferState.may_overwrite` allows)? `bufferize` emits the memref form
    and binds the op's results to buffers.
    """

    def reads(self, op: Operation, index: int) -> bool:
        """Whether `op` reads the elements of operand `index`."""
        return isinstance(op.operands[index].type, TensorType)

    def writes(self, op: Operation, index: int) -> bool:
        """Whether `op` may write into the buffer of operand `index` (run in place)."""
        return False

    @abstractmethod
    def bufferize(self, state: "BufferState", op: Operation) -> None:
        """Emit the memref form of `op` at the end of the state's current block."""


@dataclass
class Scope:
    """A new block being filled, and the buffers it owns."""

    block: Block
    owned: list[SSAValue] = field(default_factory=list[SSAValue])
    handed_over: set[SSAValue] = field(default_factory=set[SSAValue])


class Globals:
    """
    The `memref.global`s holding constant tensors, one per distinct value, each at the
    location of the first constant that needs it.
    """

    def __init__(self) -> None:
        self.ops: list[tuple[memref.GlobalOp, Attribute]] = []
        self._names: dict[tuple[Attribute, Attribute], str] = {}

    def name_for(
        self, value: DenseIntOrFPElementsAttr, type_: MemRefType, location: Attribute
    ) -> str:
        """The private constant global holding `value`."""
        key = (value, type_)
        if key not in self._names:
            name = f"__constant_{len(self._names)}"
            self._names[key] = name
            global_op = memref.GlobalOp.get(
                StringAttr(name), type_, value, constant=UnitAttr(), alignment=ALIGNMENT
            )
            self.ops.append((global_op, location))
        return self._names[key]

    def resource(self, value: DenseResourceAttr, type_: MemRefType, location: Attribute) -> str:
        """
        An uninitialised public global named after a `dense_resource` handle: an
        external declaration whose data the JIT binds (`mlc.resources`).
        """
        name = resources.symbol_name(value.resource_handle.data)
        if (value, type_) not in self._names:
            self._names[(value, type_)] = name
            global_op = memref.GlobalOp.get(
                StringAttr(name), type_, UnitAttr(), StringAttr("public"), UnitAttr(), ALIGNMENT
            )
            self.ops.append((global_op, location))
        return name

    def insert_into(self, block: Block) -> None:
        """Put the globals at the start of `block` (the module's), in creation order."""
        for global_op, location in reversed(self.ops):
            located_builder(InsertPoint.at_start(block), location).insert(global_op)


class BufferState:
    """The memref form of one function being built; the tensor form is only read."""

    def __init__(self, globals_: Globals, rules: Mapping[type[Operation], BufferizableOp]):
        self.globals = globals_
        self.rules = rules
        self.values: dict[SSAValue, SSAValue] = {}  # tensor-level value -> new value
        self.root: dict[SSAValue, SSAValue] = {}  # memref -> the buffer it lives in
        self.writable: set[SSAValue] = set()  # buffers this function may overwrite
        self.donated: dict[int, SSAValue] = {}  # result -> the argument buffer it is left in
        self.tensors_in: defaultdict[SSAValue, list[SSAValue]] = defaultdict(list)
        self.aliases: defaultdict[SSAValue, list[SSAValue]] = defaultdict(list)
        self.origin: dict[SSAValue, Attribute] = {}  # buffer -> where it was made
        self.deferred_empty: dict[SSAValue, tensor.EmptyOp] = {}  # allocated only if needed
        self.written_back: set[Operation] = set()  # insert_slices whose source is in place
        self.scopes: list[Scope] = []
        self.location: Attribute = UnknownLoc()  # of the op being bufferized

    # -- emitting ---------------------------------------------------------------

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @contextmanager
    def at(self, location: Attribute) -> Iterator[None]:
        """While open, the ops emitted take `location`."""
        outer, self.location = self.location, location
        try:
            yield
        finally:
            self.location = outer

    def emit(self, op: Operation) -> Operation:
        """Append `op` to the current block, at the current location."""
        return located_builder(InsertPoint.at_end(self.scope.block), self.location).insert(op)

    def convert(self, op: Operation) -> None:
        """Bufferize `op` by its class's rule; ops without tensors are cloned."""
        with self.at(op.location):
            if (rule := self.rules.get(type(op))) is not None:
                rule.bufferize(self, op)
                return
            tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
            if tensors or op.regions:
                raise op_error(op, f"bufferize: no rule for '{op.name}' on tensors")
            self.clone(op)

    def clone(self, op: Operation) -> None:
        """Copy an op without tensors, its operands renamed."""
        new = self.emit(op.clone(value_mapper={v: self.lookup(v) for v in op.operands}))
        for old, result in zip(op.results, new.results):
            self.bind(old, result)

    # -- values and buffers -----------------------------------------------------

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
        self.origin[value] = self.location
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
        if buffer not in self.scope.owned and not self._donated_here(buffer):
            return False
        return all(not_used_after(t, at) for t in self.tensors_in[buffer])

    def donate(self, buffers: Mapping[int, SSAValue]) -> None:
        """The function's donated argument buffers, by the result each is to hold."""
        self.donated = dict(buffers)
        self.writable.update(buffers.values())

    def returned_in(self, value: SSAValue) -> SSAValue | None:
        """The donated argument buffer tensor `value` is returned in, if any."""
        for use in value.uses:
            if isinstance(use.operation, func.ReturnOp) and use.index in self.donated:
                return self.donated[use.index]
        return None

    def returned_as_is(self, value: SSAValue) -> bool:
        """Whether tensor `value` is a result the function returns (not a donated one)."""
        return any(
            isinstance(use.operation, func.ReturnOp) and use.index not in self.donated
            for use in value.uses
        )

    def _donated_here(self, buffer: SSAValue) -> bool:
        """A donated argument, overwritten only at the function's own level (a loop body
        runs again, and reads what the first run wrote)."""
        return len(self.scopes) == 1 and buffer in self.donated.values()

    def may_overwrite(self, op: Operation, index: int) -> bool:
        """May `op` run in place on operand `index`: its rule writes it, and it dies here."""
        rule = self.rules.get(type(op))
        return (
            rule is not None
            and rule.writes(op, index)
            and self.can_overwrite(op.operands[index], op)
        )

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

    def emit_copy(self, source: SSAValue, target: SSAValue) -> None:
        """`target[...] = source[...]`, both memrefs."""
        self.emit(copy_op(source, target, self.location))

    def copy(self, source: SSAValue, shape_type: TensorType | MemRefType) -> SSAValue:
        """A fresh, contiguous, owned copy of memref `source`."""
        target_type = MemRefType(shape_type.element_type, shape_type.get_shape())
        target = self.alloc(target_type, self.dims_of(source))
        self.emit_copy(source, target)
        return target

    def _materialize_empty(self, old: SSAValue) -> None:
        empty = self.deferred_empty.pop(old)
        with self.at(empty.location):
            sizes = [self.lookup(size) for size in empty.dynamic_sizes]
            self.bind(old, self.alloc(memref_type(empty.tensor.type), sizes))

    # -- ownership --------------------------------------------------------------

    def hand_over(self, old: SSAValue) -> SSAValue:
        """A buffer holding `old` that the current block owns and gives away."""
        new = self.lookup(old)
        if (
            self.root.get(new) is new
            and new in self.scope.owned
            and new not in self.scope.handed_over
            and is_contiguous(new.type)
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

    def pass_into(self, op: Operation, index: int) -> SSAValue:
        """A buffer for operand `index` that `op` (a loop) takes ownership of."""
        old = op.operands[index]
        new = self.lookup(old)
        if (
            self.root.get(new) is new
            and new in self.scope.owned  # not a donated argument: the caller keeps it
            and self.may_overwrite(op, index)
            and is_contiguous(new.type)
        ):
            self.scope.owned.remove(new)
            return new
        copied = self.copy(new, old.type)
        self.scope.owned.remove(copied)
        return copied

    # -- blocks -----------------------------------------------------------------

    def new_block_like(self, old: Block) -> Block:
        """An empty block with `old`'s arguments as memrefs, mapped to them."""
        new = Block(arg_types=[convert_type(arg.type) for arg in old.args])
        for old_arg, new_arg in zip(old.args, new.args):
            new_arg.name_hint = old_arg.name_hint
            self.bind(old_arg, new_arg)
        return new

    def fill_block(self, old: Block, new: Block, owned_args: Sequence[SSAValue] = ()) -> None:
        """Emit the memref form of `old` into `new` (whose args are already mapped)."""
        self.scopes.append(Scope(new))
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
                    user = ancestor_in(use.operation, block)
                    if user is not None and (last is None or last.is_before_in_block(user)):
                        last = user
            if last is None:  # an unused block argument
                point = InsertPoint.at_start(block)
            elif last.has_trait(IsTerminator):
                point = InsertPoint.before(last)
            else:
                point = InsertPoint.after(last)
            located_builder(point, self.origin[buffer]).insert(memref.DeallocOp.get(buffer))
