"""
bound-device-sizes: a size the device computes, with a static upper bound, sizes buffers
and launches at its bound; the kernels read the size itself from device memory.

A size known only at run time (the count of a `NonZero`, which slices its result) is
computed by a kernel; the host read it back (`cuMemcpyDtoH`) to size the buffers and
the grids of the launches after it. The read waits for every kernel launched so far,
so a sparse MoE layer drained the GPU once an expert. When the value is the size of a
slice of a static dim (`memref.subview %b[0, 0] [2, %n]` of a `memref<2x65xi64>`), it
is at most that dim: *bounded*, as XLA's bounded dynamic shapes are. Then

- the host uses the bound in its place: buffers are allocated at the bound, grids
  cover it, views are that large (the rows past the size are never read as data);
- each launch whose body uses the size, or a value computed from it, loads it from
  the device buffer at the kernel's start (clamped into `[0, bound]`) and recomputes
  what it uses from it: its loops and guards then cover the true size, and the threads
  past it do nothing;
- checks of it (`cf.assert`) read it once at the end of the function, after every
  launch (then `defer-device-checks` keeps them there);
- the buffer it is read from is freed at the end.

    %n = memref.load %count[] : memref<i64>          // waits for the GPU
    %s = arith.index_cast %n : i64 to index
    %v = memref.subview %cols[0, 0] [2, %s] [1, 1] : memref<2x65xi64> to ...
    %r = memref.alloc(%s) : memref<?x2xi64>
    "gpu.launch"(%grid(%s), ...) ({ ... arith.cmpi ult, %i, %s ... })
==>
    %v = memref.subview %cols[0, 0] [2, 65] [1, 1] ...
    %r = memref.alloc(%c65) : memref<?x2xi64>
    "gpu.launch"(%grid(65), ...) ({
      %k = memref.load %count[] ; clamped, cast: %s' ... arith.cmpi ult, %i, %s' ...
    })

The bound is the static room in the sliced dim, or, where that dim is dynamic, the
size its buffer was made with (the count of a `NonZero` of a dynamic input is at most
its element count plus one), computed before the read. A size is bounded only where
every use on the host is one of these (arithmetic on it, a size of an alloc, a subview
or an expand_shape, a launch's grid, an `scf.if` choosing between launches, a check, a
use in a launch's body) and the buffers it sizes are only viewed, freed or used in
launches, with elements placed independently of their sizes: a buffer sized by it that
the function returns keeps the host read, as its caller needs the true size. Runs
before `gpu-kernel-outlining`, so the values a body now needs become kernel arguments.
"""

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, gpu, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from mlc.lowering.gpu.defer_device_checks import VIEWS, buffer_root, untouched_after

SIZED = (memref.AllocOp, memref.SubviewOp, memref.ExpandShapeOp)


def bound_sizes(function: func.FuncOp) -> int:
    """Bound the device-computed sizes of `function` (module docstring); how many."""
    returns = [op for op in function.walk() if isinstance(op, func.ReturnOp)]
    if len(returns) != 1:
        return 0
    block = returns[0].parent_block()
    assert block is not None
    resolve_dims(block)
    done = 0
    for load in [op for op in block.ops if isinstance(op, memref.LoadOp)]:
        if bound_load(load, block, returns[0]):
            done += 1
    return done


def resolve_dims(block: Block) -> None:
    """
    `memref.dim` of a dynamic dim of an alloc, subview or expand_shape: its size
    operand; of a collapse_shape: that of the one dynamic dim of its group, times the
    group's static dims.
    """
    for op in list(block.walk()):
        if not isinstance(op, memref.DimOp):
            continue
        axis = constant_of(op.index)
        size = size_operand(op.source, axis, op) if axis is not None else None
        if size is not None:
            op.result.replace_all_uses_with(size)
            op.detach()
            op.erase()


def size_operand(value: SSAValue, axis: int, at: Operation) -> SSAValue | None:
    """
    The value of dynamic dim `axis` of `value`, where an op of `SIZED` or a
    collapse_shape of one made it (the product computed before `at`).
    """
    owner = value.owner
    type_ = value.type
    if not isinstance(type_, MemRefType):
        return None
    shape = type_.get_shape()
    if not 0 <= axis < len(shape) or shape[axis] >= 0:
        return None
    if isinstance(owner, memref.CollapseShapeOp):
        group = [a.value.data for a in owner.reassociation.data[axis].data]
        source = owner.src.type
        assert isinstance(source, MemRefType)
        dims = [source.get_shape()[d] for d in group]
        unknown = [d for d, size in zip(group, dims, strict=True) if size < 0]
        if len(unknown) != 1:
            return None
        inner = size_operand(owner.src, unknown[0], at)
        scale = 1
        for size in dims:
            scale *= size if size >= 0 else 1
        if inner is None or scale == 1:
            return inner
        factor = arith.ConstantOp(IntegerAttr(scale, IndexType()))
        product = arith.MuliOp(inner, factor.result)
        block = at.parent_block()
        assert block is not None
        block.insert_ops_before([factor, product], at)
        return product.result
    if not isinstance(owner, SIZED):
        return None
    if isinstance(owner, memref.AllocOp):
        operands, static = owner.dynamic_sizes, shape
    elif isinstance(owner, memref.SubviewOp):
        operands, static = owner.sizes, owner.static_sizes.get_values()
    else:
        operands, static = owner.output_shape, owner.static_output_shape.get_values()
    dynamic_before = sum(1 for d in static[:axis] if d < 0)
    return operands[dynamic_before] if len(operands) > dynamic_before else None


def constant_of(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def bound_load(load: memref.LoadOp, block: Block, ret: func.ReturnOp) -> bool:
    """Bound the size `load` reads, if it is one (module docstring); whether it was."""
    if not isinstance(load.res.type, IntegerType | IndexType):
        return False
    if any(constant_of(i) is None for i in load.indices):
        return False
    root = buffer_root(load.memref)
    order = {op: i for i, op in enumerate(block.ops)}
    if root is None or root.parent_block() is not block:
        return False
    dealloc = untouched_after(root, load, order)
    if dealloc is False:
        return False
    found = SizeUses(load.res, block)
    if not found.collect():
        return False
    bound = bound_before(load, found)
    if bound is None:
        return False
    values, inside, asserts = found.values, found.inside, found.asserts
    for launch, uses in inside.items():
        recompute_in_body(launch, uses, load, values, bound, order)
    if asserts:
        check_at_end(asserts, load, values, order, ret)
    load.res.replace_all_uses_with(bound)
    load.detach()
    load.erase()
    if isinstance(dealloc, Operation):
        dealloc.detach()
        block.insert_op_before(dealloc, ret)
    return True


@dataclass
class SizeUses:
    """
    What is computed from a size in a block, where every use is one the module
    docstring allows: the values (ops in block order), the uses inside each launch's
    body, the checks, and the bound (the least static extent of a subview it sizes,
    through `index_cast`s).
    """

    value: SSAValue
    block: Block
    values: dict[SSAValue, None] = field(default_factory=dict)
    inside: dict[gpu.LaunchOp, list[tuple[Operation, int]]] = field(default_factory=dict)
    asserts: list[cf.AssertOp] = field(default_factory=list)
    bound: int | None = None
    rooms: list[SSAValue] = field(default_factory=list)  # dynamic bounds, host-known

    def collect(self) -> bool:
        """Follow every use; whether all are allowed."""
        self.values[self.value] = None
        pending = [self.value]
        while pending:
            current = pending.pop()
            for use in list(current.uses):
                if not self.take(use.operation, use.index, current, pending):
                    return False
        return True

    def take_size(self, user: Operation, current: SSAValue) -> bool:
        """Record a use of `current` as a size of a buffer; whether it is allowed."""
        allowed, extent = sized_by(user, current, self.value, self.block)
        if isinstance(extent, int):
            self.bound = extent if self.bound is None else min(self.bound, extent)
        elif extent is not None:
            self.rooms.append(extent)
        return allowed

    def take(self, user: Operation, index: int, current: SSAValue, pending: list) -> bool:
        """Record one use of `current`; whether it is allowed."""
        launch = enclosing_launch(user, self.block)
        if launch is not None:
            self.inside.setdefault(launch, []).append((user, index))
        elif isinstance(user, gpu.LaunchOp) and in_choice(user, self.block):
            pass  # a grid (of one of the kernels an `scf.if` chooses from): the bound's
        elif user.parent_block() is not self.block:
            return False
        elif isinstance(user, cf.AssertOp):
            self.asserts.append(user)
        elif isinstance(user, SIZED):
            return self.take_size(user, current)
        elif user.dialect_name() == "arith" and is_side_effect_free(user):
            for result in user.results:
                if result not in self.values:
                    self.values[result] = None
                    pending.append(result)
        else:
            return isinstance(user, scf.IfOp)  # a choice of kernels: made for the bound
        return True


def sized_by(
    user: Operation, current: SSAValue, value: SSAValue, block: Block
) -> tuple[bool, int | SSAValue | None]:
    """
    Whether `user` (of `SIZED`) takes `current` as a size of a buffer whose uses allow
    a larger one, and the static room it has for `value`, where it is a subview's.
    """
    if isinstance(user, memref.SubviewOp) and current in (*user.offsets, *user.strides):
        return False, None  # a view the size places, not sizes
    if not buffer_uses_allowed(user.results[0], block):
        return False, None
    if isinstance(user, memref.SubviewOp) and is_size(current, value):
        return True, subview_extent(user, current)
    return True, None


def buffer_uses_allowed(buffer: SSAValue, block: Block) -> bool:
    """
    Whether a buffer sized at the bound is only viewed, freed, and read or written in
    launches' bodies: none of these takes its (now larger) size for the true one.
    """
    pending = [buffer]
    while pending:
        current = pending.pop()
        if not isinstance(current.owner, memref.SubviewOp) and not layout_ignores_sizes(
            current.type
        ):
            return False  # a subview's elements lie where its source's strides put them
        for use in current.uses:
            user = use.operation
            if isinstance(user, memref.DimOp):
                return False
            if isinstance(user, VIEWS):
                pending.extend(user.results)
            elif not isinstance(user, memref.DeallocOp) and enclosing_launch(user, block) is None:
                return False
    return True


def layout_ignores_sizes(type_: Attribute) -> bool:
    """
    Whether no element's address in a buffer of `type_` depends on its dynamic sizes:
    static strides, or a row-major layout whose dynamic dims follow only dims of 1. A
    buffer allocated at the bound then holds the true size's elements where a buffer of
    that size would, and a kernel that reads the first rows reads them.
    """
    if not isinstance(type_, MemRefType):
        return False
    layout = type_.layout
    if isinstance(layout, StridedLayoutAttr):
        return all(isinstance(s, int) for s in layout.get_strides())
    if not isinstance(layout, NoneAttr):
        return False
    shape = type_.get_shape()
    first = next((k for k, d in enumerate(shape) if d < 0), len(shape))
    return all(d == 1 for d in shape[:first])


def is_size(current: SSAValue, value: SSAValue) -> bool:
    """Whether `current` is `value` itself, or `value` through `arith.index_cast`s."""
    while current is not value:
        owner = current.owner
        if not isinstance(owner, arith.IndexCastOp):
            return False
        current = owner.input
    return True


def subview_extent(view: memref.SubviewOp, size: SSAValue) -> int | SSAValue | None:
    """
    The room for `size` in `view`'s source: its dim less a static offset, or the
    dynamic size its source was made with (at offset 0).
    """
    source = view.source.type
    if not isinstance(source, MemRefType):
        return None
    static_sizes = view.static_sizes.get_values()
    dynamic_at = [axis for axis, d in enumerate(static_sizes) if d < 0]
    offsets = view.static_offsets.get_values()
    for axis, operand in zip(dynamic_at, view.sizes, strict=False):
        dim = source.get_shape()[axis]
        if operand is not size or offsets[axis] < 0:
            continue
        if dim >= 0:
            return dim - offsets[axis]
        if offsets[axis] == 0:
            return size_operand(view.source, axis, view)
    return None


def materialize(value: SSAValue, load: memref.LoadOp, found: "SizeUses") -> SSAValue | None:
    """
    `value` available before `load`: itself where it is defined before it, else its
    side-effect-free `arith` ops cloned before it (none computed from the size).
    """
    if value in found.values:
        return None
    owner = value.owner
    if not isinstance(owner, Operation):
        return value  # a block's argument: the function's, or one around it
    anchor = owner
    while anchor.parent_block() is not found.block:
        anchor = anchor.parent_op()
        if anchor is None:
            return value  # defined around the function body
    if found.block.get_operation_index(anchor) < found.block.get_operation_index(load):
        return value
    if anchor is not owner or owner.dialect_name() != "arith" or not is_side_effect_free(owner):
        return None
    operands = [materialize(operand, load, found) for operand in owner.operands]
    if any(o is None for o in operands):
        return None
    clone = owner.clone(value_mapper=dict(zip(owner.operands, operands, strict=True)))
    found.block.insert_op_before(clone, load)
    return clone.results[owner.results.index(value)]


def bound_before(load: memref.LoadOp, found: "SizeUses") -> SSAValue | None:
    """The bound of what `load` reads, of its type, computed before it: static if known."""
    if found.bound is not None:
        made: list[Operation] = [arith.ConstantOp(IntegerAttr(found.bound, IndexType()))]
        found.block.insert_ops_before(made, load)
        bound = made[0].results[0]
    else:
        rooms = (materialize(room, load, found) for room in found.rooms)
        bound = next((room for room in rooms if room is not None), None)
        if bound is None:
            return None
    if isinstance(load.res.type, IndexType):
        return bound
    cast = arith.IndexCastOp(bound, load.res.type)
    found.block.insert_op_before(cast, load)
    return cast.result


def in_choice(op: Operation, block: Block) -> bool:
    """Whether `op` is in `block`, or in `scf.if`s of `block` (and no other op)."""
    outer = op
    while outer.parent_block() is not block:
        outer = outer.parent_op()
        if not isinstance(outer, scf.IfOp):
            return False
    return True


def enclosing_launch(op: Operation, block: Block) -> gpu.LaunchOp | None:
    """
    The `gpu.launch` whose body holds `op`, where it is an op of `block` or of the
    `scf.if`s of `block` that choose between launches (a contraction's kernels).
    """
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, gpu.LaunchOp):
        parent = parent.parent_op()
    return parent if parent is not None and in_choice(parent, block) else None


def recompute_in_body(
    launch: gpu.LaunchOp,
    uses: list[tuple[Operation, int]],
    load: memref.LoadOp,
    values: dict[SSAValue, None],
    bound: SSAValue,
    order: dict[Operation, int],
) -> None:
    """The body of `launch` loads the size itself and recomputes the values it uses."""
    body = launch.body.block
    first = body.first_op
    assert first is not None
    read = load.clone()
    low = arith.ConstantOp(IntegerAttr(0, load.res.type))
    above = arith.MaxSIOp(read.res, low.result)
    clamped = arith.MinSIOp(above.result, bound)
    for op in (read, low, above, clamped):
        body.insert_op_before(op, first)
    mapping = {load.res: clamped.result}
    for user, index in uses:
        user.operands[index] = clone_cone(user.operands[index], mapping, values, order, body, first)


def clone_cone(
    value: SSAValue,
    mapping: dict[SSAValue, SSAValue],
    values: dict[SSAValue, None],
    order: dict[Operation, int],
    block: Block,
    before: Operation | None,
) -> SSAValue:
    """`value` recomputed before `before` (at the end of `block` if None) from `mapping`."""
    if value in mapping:
        return mapping[value]
    cone: list[Operation] = []
    pending = [value]
    while pending:
        current = pending.pop()
        owner = current.owner
        if current in mapping or current not in values or not isinstance(owner, Operation):
            continue
        if owner not in cone:
            cone.append(owner)
            pending.extend(owner.operands)
    for op in sorted(cone, key=order.__getitem__):
        clone = op.clone(value_mapper=dict(mapping))
        if before is None:
            block.add_op(clone)
        else:
            block.insert_op_before(clone, before)
        for old, new in zip(op.results, clone.results, strict=True):
            mapping[old] = new
    return mapping[value]


def check_at_end(
    asserts: list[cf.AssertOp],
    load: memref.LoadOp,
    values: dict[SSAValue, None],
    order: dict[Operation, int],
    ret: func.ReturnOp,
) -> None:
    """The checks of the size read it once more, after every launch, before `ret`."""
    block = ret.parent_block()
    assert block is not None
    read = load.clone()
    block.insert_op_before(read, ret)
    mapping = {load.res: read.res}
    tail = Block()
    for check in sorted(asserts, key=order.__getitem__):
        condition = clone_cone(check.arg, mapping, values, order, tail, None)
        check.detach()
        check.operands[0] = condition
        tail.add_op(check)
    for op in list(tail.ops):
        op.detach()
        block.insert_op_before(op, ret)


@dataclass(frozen=True)
class BoundDeviceSizesPass(ModulePass):
    """Size buffers and launches at the static bound of a device-computed size."""

    name = "bound-device-sizes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.body.block.ops:
            if isinstance(function, func.FuncOp):
                bound_sizes(function)
