"""
Ops moved into a private function of their own and called in their place: the part of
kernel outlining that both targets share (`outline-kernels` on the CPU,
`outline-contractions` on the GPU).

A model repeats its kernels, and a kernel outlined into a function is lowered once
however many layers call it, once the copies are merged (`function_merging.merge`).
What a kernel is (which ops go with it) is each target's; here is how its ops move:

    %w = memref.get_global @w1
    <fill %y> ; linalg.generic ins(%x, %w) outs(%y)
==>
    func.call @f_kernel0(%x, %w, %y)
    func.func private @f_kernel0(%0, %1, %2) attributes {mlc.kernel} { ... }

Every value the ops read from outside becomes an argument, in order of first use, a
model's weights (`memref.get_global`) included, so that two layers of one shape are
one function. `kernel_key` tells, before anything moves, whether two groups of ops
would become functions that merge.
"""

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, UnitAttr
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.support.function_merging import merge, structure
from mlc.lowering.support.op_walk import walk_ops

KERNEL_ATTR = "mlc.kernel"
"""On a function outlined here: its calls are the kernels (the profiling passes time
each call, not the body, which serves several layers)."""


def read_from_outside(ops: Sequence[Operation]) -> list[SSAValue]:
    """The values `ops` (and the ops nested in them) read and do not define, in order."""
    inside = {nested for op in ops for nested in walk_ops(op)}
    found: dict[SSAValue, None] = {}
    for op in ops:
        for nested in walk_ops(op):
            for operand in nested.operands:
                owner = operand.owner
                if (owner.parent_op() if isinstance(owner, Block) else owner) not in inside:
                    found.setdefault(operand, None)
    return list(found)


def ops_key(ops: Sequence[Operation]) -> tuple[object, ...]:
    """
    Equal for two groups of ops exactly when their outlined functions would merge: the
    types of the values read from outside and the ops' structure over them (`structure`,
    on a copy of the ops in a block of their own, so that nothing in the IR moves).
    """
    values = read_from_outside(ops)
    block = Block(arg_types=[value.type for value in values])
    mapping: dict[SSAValue, SSAValue] = dict(zip(values, block.args))
    for op in ops:
        block.add_op(op.clone(value_mapper=mapping))
    region = Region(block)
    key = structure(region)
    region.detach_block(block).erase()
    return key


def move_into_function(
    ops: Sequence[Operation],
    values: Sequence[SSAValue],
    name: str,
    call_before: Operation,
    arg_attrs: Sequence[DictionaryAttr] | None = None,
    frees: Sequence[Operation] = (),
) -> func.FuncOp:
    """
    A private function `name` (not yet in a module) running copies of `ops` over
    arguments standing for `values` (at least what the ops read from outside), a call
    of it before `call_before` with the location of `call_before`, `frees` (deallocs of
    buffers the ops read, which were before them) moved after the call, and `ops` erased.
    """
    block = Block(arg_types=[value.type for value in values])
    mapping: dict[SSAValue, SSAValue] = dict(zip(values, block.args))
    for op in ops:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(func.ReturnOp())
    attrs = ArrayAttr(arg_attrs or [DictionaryAttr({}) for _ in values])
    types = ([value.type for value in values], [])
    function = func.FuncOp(name, types, Region(block), "private", arg_attrs=attrs)
    function.attributes[KERNEL_ATTR] = UnitAttr()
    function.location = call_before.location
    call = func.CallOp(name, list(values), [])
    call.location = call_before.location
    Rewriter.insert_op(call, InsertPoint.before(call_before))
    for free in frees:
        free.detach()
        Rewriter.insert_op(free, InsertPoint.after(call))
    for op in reversed(ops):
        Rewriter.erase_op(op)
    return function


def fresh_name(base: str, taken: set[str]) -> str:
    """`<base>_kernel<N>` for the least N not in `taken`, which it joins."""
    count = 0
    while (name := f"{base}_kernel{count}") in taken:
        count += 1
    taken.add(name)
    return name


def insert_after(module: ModuleOp, function: func.FuncOp, after: Operation) -> func.FuncOp:
    """`function` placed after `after` (a function of `module`); returns it."""
    module.body.block.insert_op_after(function, after)
    return function


K = TypeVar("K")  # what a target takes a kernel to be


def outline_kernels(
    module: ModuleOp,
    kernel_of: Callable[[GenericOp], K | None],
    key: Callable[[K], Hashable],
    outline: Callable[[K, str, Operation], func.FuncOp],
    repeated_only: bool = True,
) -> None:
    """
    Outline the kernels of `module`'s functions and merge the copies: each top-level
    generic that `kernel_of` makes a kernel of (and, with `repeated_only`, whose `key`
    another kernel shares: one alone of its kind is as cheap where it is) becomes a
    function through `outline(kernel, name, after)`, placed after `after`, and the
    functions equal up to their names are then one.
    """
    names = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    functions = [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and f.body.blocks and KERNEL_ATTR not in f.attributes
    ]
    kinds: Counter[Hashable] = Counter()
    if repeated_only:
        kinds.update(
            key(k) for f in functions for g in _generics(f) if (k := kernel_of(g)) is not None
        )
    outlined: set[Operation] = set()
    for function in functions:
        after: Operation = function
        for generic in _generics(function):
            if (kernel := kernel_of(generic)) is None:
                continue
            if repeated_only and kinds[key(kernel)] < 2:
                continue
            after = outline(kernel, fresh_name(function.sym_name.data, names), after)
            outlined.add(after)
    if outlined:
        merge(module, module, lambda candidate: candidate in outlined)


def _generics(function: func.FuncOp) -> list[GenericOp]:
    """The generics at the top of `function`'s blocks, listed before any moves."""
    return [g for b in function.body.blocks for g in b.ops if isinstance(g, GenericOp)]
