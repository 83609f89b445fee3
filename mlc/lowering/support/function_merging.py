"""
Functions equal up to their names, found and merged: one body compiled for each kind.

A model repeats its kernels (a ResNet's convolutions of one shape, a transformer's N
blocks), and each copy would be lowered, optimised and compiled again. `merge` keeps
the first function of each kind in a symbol table, points every reference to a copy
(a `func.call`, a `gpu.launch_func`, an `llvm.mlir.addressof`: any symbol reference
held as an attribute or property) at the kept one, and erases the copies.

Two functions are of one kind when they are ops of one name with equal attributes and
properties, their symbol name aside, and structurally equivalent bodies (as xDSL's
`is_structurally_equivalent`: same ops, attributes, properties and types, the same
use-def structure; SSA names and locations aside). Each body is reduced to one key in
one walk (`structure`), so finding the copies is a dictionary lookup per function and
the whole is linear in the functions' size.
Merging is repeated until nothing changes: two functions that called two copies call
one function once the copies are merged, and are copies in turn.
"""

from collections.abc import Callable, Iterable

from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, Region

from mlc.lowering.support.op_walk import walk_ops

SymbolPath = tuple[str, ...]


def _symbol(op: Operation) -> str:
    name = op.properties.get("sym_name") or op.attributes.get("sym_name")
    assert name is not None and hasattr(name, "data"), f"{op.name} has no symbol name"
    return name.data  # pyright: ignore[reportAttributeAccessIssue]


def _body(op: Operation) -> Region:
    return op.regions[0]


def _signature(op: Operation) -> tuple[object, ...]:
    """What two functions of one kind share outside their bodies."""
    properties = tuple(sorted((k, v) for k, v in op.properties.items() if k != "sym_name"))
    attributes = tuple(sorted((k, v) for k, v in op.attributes.items() if k != "sym_name"))
    return (op.name, properties, attributes)


def _fields(fields: dict[str, Attribute]) -> tuple[tuple[str, Attribute], ...]:
    return tuple(sorted(fields.items())) if len(fields) > 1 else tuple(fields.items())


def structure(region: Region) -> tuple[object, ...]:
    """
    A key equal for two regions exactly when they are structurally equivalent: each op's
    name, attributes, properties and result types, each block's argument types, and every
    use of a value or block as the number of its definition (in walk order), so that SSA
    names and locations do not count. A value or block defined outside the region counts
    as itself, as in `is_structurally_equivalent` (which compares no result types: a key
    also tells apart two `memref.alloc`s of different shapes). One walk with an explicit
    stack: xDSL's recursive comparison cost ~1 s on ResNet-50's outlined loops.
    """
    numbers: dict[object, int] = {}
    key: list[object] = []

    def number(thing: object) -> object:
        found = numbers.get(thing)
        return ("outside", id(thing)) if found is None else found

    stack: list[Region | Operation] = [region]
    while stack:
        item = stack.pop()
        if isinstance(item, Region):
            blocks = list(item.blocks)
            for block in blocks:  # successors may name a later block
                numbers[block] = len(numbers)
            key.append(len(blocks))
            nested: list[Operation] = []
            for block in blocks:
                key.append(len(block.args))
                for arg in block.args:
                    numbers[arg] = len(numbers)
                    key.append(arg.type)
                ops = list(block.ops)
                key.append(len(ops))
                nested += ops
            nested.reverse()
            stack.extend(nested)
            continue
        op = item
        key += (
            op.name,
            tuple(number(operand) for operand in op.operands),
            tuple(number(successor) for successor in op.successors),
            _fields(op.properties),
            _fields(op.attributes),
            tuple(result.type for result in op.results),
            len(op.regions),
        )
        for result in op.results:
            numbers[result] = len(numbers)
        stack.extend(reversed(op.regions))
    return tuple(key)


def kinds(functions: Iterable[Operation]) -> dict[str, str]:
    """The name of each function of `functions` that repeats an earlier one, mapped to
    the name of that earlier one. Declarations (no body) repeat nothing."""
    first: dict[tuple[object, ...], Operation] = {}
    repeats: dict[str, str] = {}
    for op in functions:
        if not op.regions or not _body(op).blocks:
            continue
        kept = first.setdefault((_signature(op), structure(_body(op))), op)
        if kept is not op:
            repeats[_symbol(op)] = _symbol(kept)
    return repeats


def _renamed(value: Attribute, renamed: dict[SymbolPath, SymbolPath]) -> Attribute | None:
    if not isinstance(value, SymbolRefAttr):
        return None
    path = (value.root_reference.data, *(ref.data for ref in value.nested_references))
    if (new := renamed.get(path)) is None:
        return None
    return SymbolRefAttr(new[0], list(new[1:]))


def rename_references(root: Operation, renamed: dict[SymbolPath, SymbolPath]) -> list[Operation]:
    """Point every symbol reference under `root` (attributes and properties) whose path
    is a key of `renamed` at its value; the ops changed."""
    changed: list[Operation] = []
    if not renamed:
        return changed
    for op in walk_ops(root):
        for fields in (op.properties, op.attributes):
            for name, value in list(fields.items()):
                if (new := _renamed(value, renamed)) is not None:
                    fields[name] = new
                    changed.append(op)
    return changed


def _in_candidate(op: Operation, block: Block, is_candidate: Callable[[Operation], bool]) -> bool:
    """Whether `op` lies in the body of a candidate function of the table `block`."""
    while (parent := op.parent_op()) is not None:
        if op.parent is block:
            return is_candidate(op)
        op = parent
    return False


def merge(
    root: Operation,
    table: Operation,
    is_candidate: Callable[[Operation], bool],
    prefix: SymbolPath = (),
    aliases: Callable[[dict[str, str]], dict[str, str]] = lambda merged: merged,
) -> dict[str, str]:
    """
    Merge the functions of kind among the ops of symbol table `table` that pass
    `is_candidate`, redirecting references under `root`, where the table's symbols are
    spelled `@<prefix>::@<name>`; repeat until no two are of a kind. Returns each
    erased name mapped to the kept one. `aliases(merged)` may widen the renaming to
    other symbols that follow a function (a stub per function); those are erased too.
    """
    block = table.regions[0].block
    merged: dict[str, str] = {}
    candidates = [op for op in block.ops if is_candidate(op)]
    while candidates:
        repeats = kinds(candidates)
        if not repeats:
            break
        for old, new in list(merged.items()):  # a kept function merged in turn
            merged[old] = repeats.get(new, new)
        merged.update(repeats)
        renamed = aliases(repeats)
        paths = {(*prefix, old): (*prefix, new) for old, new in renamed.items()}
        changed = rename_references(root, paths)
        for op in list(block.ops):
            if op.properties.get("sym_name") is not None or "sym_name" in op.attributes:
                if _symbol(op) in renamed:
                    block.erase_op(op)
        # Only functions that now call a kept function instead of a copy can have
        # become copies of each other: compare again only if there are such.
        callers = {id(op) for op in changed if _in_candidate(op, block, is_candidate)}
        candidates = [op for op in block.ops if is_candidate(op)] if callers else []
    return merged
