"""
`scf.parallel` -> an outlined chunk function and a call into mlc's thread pool.

The outermost `scf.parallel` of a function runs on all cores; any `scf.parallel`
nested in it, or left over, runs serially as `scf.for` nests (`SerialParallel`).
Its first dimension is split among threads by iteration number `t` in `[0, n)`, with
`n = ceil((ub - lb) / step)`; the other dimensions stay inside each iteration:

    scf.parallel (%i, %j) = (%lb, %lb1) to (%ub, %ub1) step (%s, %s1) { body }
==>
    func.func private @f_parallel0(%lo, %hi, %lb, %s, captured...) {
      scf.for %t = %lo to %hi { %i = %lb + %t * %s; scf.for %j ... { body } }
    }
    %n = ceil((%ub - %lb) / %s)
    %big = %n * (fixed + per_step * min(%s, PARALLEL_THRESHOLD)) >= PARALLEL_THRESHOLD
           and %n > 1
    func.call @f_parallel0_dispatch(%big, 0, %n, %lb, %s, captured...)  // a declaration

An iteration's work is weighed by `parallel_work.weigh`.
`captured` are the values the body uses from outside; those that are buffers no other
captured memref reaches are marked `llvm.noalias` (`distinct_buffers`). Once everything is in the
`llvm` dialect, `link_dispatch_calls` replaces each call to a `_dispatch` declaration
by: the (expanded) arguments stored in 8-byte slots on the stack (each is a pointer, an
integer or a float; the slots are allocated in the entry block, so a loop around the
call does not grow the stack), and a branch on `%big` between

    llvm.call @mlc_parallel_for(@f_parallel0_chunk, %lo, %hi, %struct, @f_parallel0_work0)
    llvm.call @f_parallel0_chunk(%lo, %hi, %struct)         // serial, on the caller

where `@f_parallel0_chunk(%lo, %hi, %ctx)` loads the arguments back and calls
`@f_parallel0`. The serial path goes through the chunk function too: the arguments
are written once, not written for the pool and passed again, expanded, to a second
call; and where the work test is not static `@f_parallel0` keeps one caller, the
chunk, instead of being inlined into the caller as well. Only the arguments the
outlined body reads travel: once memrefs are expanded, the descriptor fields it never
reads (static sizes and strides, the allocated pointer) are dropped from
`@f_parallel0` and its calls, which cut the transformer block's `llvm`-level IR by a
third. `mlc.backend.parallel` defines
`mlc_parallel_for`: it splits `[lo, hi)` into one contiguous range per thread and runs
the chunks on its pool. `@f_parallel0_work<k>`, an internal i64 global per call site,
is where the runtime keeps the loop's measured work between calls: the compile-time
test above cannot weigh inner loops whose bounds are computed in the body, and the
runtime runs a loop on the caller alone once it has seen that it is too small to share.
Loops with reductions (`scf.parallel` with results) are rejected before any rewrite.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnknownLoc,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.convert_to_llvm import llvm_ops
from mlc.lowering.convert_to_llvm.common import PTR, constant
from mlc.lowering.convert_to_llvm.distinct_buffers import argument_attributes, distinct
from mlc.lowering.convert_to_llvm.parallel_work import Work, weigh
from mlc.lowering.support.loop_builder import constant_index
from mlc.lowering.support.op_walk import walk_ops
from mlc.tiling_model import PARALLEL_THRESHOLD

RUNTIME_ENTRY = "mlc_parallel_for"
DISPATCH_SUFFIX = "_dispatch"
CHUNK_SUFFIX = "_chunk"
WORK_SUFFIX = "_work"


def unsupported_parallel_reason(op: Operation) -> str | None:
    if isinstance(op, scf.ParallelOp) and op.initVals:
        return "with reductions is not supported by convert-to-llvm"
    return None


def captured_values(op: Operation) -> list[SSAValue]:
    """
    Values `op`'s outlined body needs from outside: the bounds of its inner dimensions,
    then the values its region uses but does not define, in first-use order.
    """
    nested = walk_ops(op)  # one walk, listed: the loop's ops are read twice
    inside = {id(inner) for inner in nested}
    seen: dict[SSAValue, None] = {}
    for bounds in (op.lowerBound[1:], op.upperBound[1:], op.step[1:]):
        for value in bounds:
            seen.setdefault(value, None)
    for inner in nested[1:]:
        for operand in inner.operands:
            owner = operand.owner
            parent = owner.parent_op() if isinstance(owner, Block) else owner
            if id(parent) not in inside:
                seen.setdefault(operand, None)
    return list(seen)


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, arith.ConstantOp)


def _serial_nest(op: scf.ParallelOp, dims: Sequence[int], ivs: list[SSAValue]) -> list[Operation]:
    """`scf.for` loops over `dims` of `op`, innermost last, whose body is `op`'s body."""
    if not dims:
        body = op.body.block
        for arg, iv in zip(body.args, ivs, strict=True):
            arg.replace_all_uses_with(iv)
        ops = [o for o in body.ops if not isinstance(o, scf.ReduceOp)]
        for o in ops:
            o.detach()
        return ops
    d = dims[0]
    block = Block(arg_types=[IndexType()])
    ivs[d] = block.args[0]
    block.add_ops([*_serial_nest(op, dims[1:], ivs), scf.YieldOp()])
    return [scf.ForOp(op.lowerBound[d], op.upperBound[d], op.step[d], [], block)]


class SerialParallel(RewritePattern):
    """An `scf.parallel` without results -> the same loops as an `scf.for` nest."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter, /) -> None:
        if op.initVals:
            return  # rejected before rewriting
        dims = list(range(len(op.lowerBound)))
        ivs: list[SSAValue] = list(op.body.block.args)
        nest = _serial_nest(op, dims, ivs)
        for new in nest:
            new.location = op.location
        rewriter.replace(op, nest, [])


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def _outlined(
    op: scf.ParallelOp, name: str, captured: list[SSAValue], constants: list[SSAValue]
) -> func.FuncOp:
    """`@name(%lo, %hi, %lb, %step, captured...)`: iterations `[lo, hi)` of `op`'s dim 0;
    the captured buffers no other captured memref reaches are marked `llvm.noalias`."""
    marks = distinct(captured)  # before the body's uses are renamed to the arguments
    index = IndexType()
    entry = Block(arg_types=[index] * 4 + [v.type for v in captured])
    lo, hi, lb, step = entry.args[:4]
    replacements: dict[SSAValue, SSAValue] = dict(zip(captured, entry.args[4:], strict=True))
    # Constants are copied rather than passed, so the body still sees them as constants
    # (memref.dim needs a constant index, and LLVM folds them).
    copies: list[Operation] = []
    for value in constants:
        owner = value.owner
        assert isinstance(owner, arith.ConstantOp)
        copies.append(owner.clone())
        replacements[value] = copies[-1].results[0]
    entry.add_ops(copies)
    # One walk of the loop renames what it uses (a constant may have thousands of uses
    # elsewhere, which `replace_uses_with_if` would visit once per loop).
    for inner in walk_ops(op):
        if any(operand in replacements for operand in inner.operands):
            inner.operands = [replacements.get(v, v) for v in inner.operands]
    loop_block = Block(arg_types=[index])
    scaled = arith.MuliOp(loop_block.args[0], step)
    iv = arith.AddiOp(lb, scaled)
    ivs: list[SSAValue] = list(op.body.block.args)
    ivs[0] = iv.result
    rest = _serial_nest(op, list(range(1, len(ivs))), ivs)
    loop_block.add_ops([scaled, iv, *rest, scf.YieldOp()])
    one = _index(1)
    loop = scf.ForOp(lo, hi, one, [], loop_block)
    entry.add_ops([one, loop, func.ReturnOp()])
    function = func.FuncOp(
        name,
        ([index] * 4 + [v.type for v in captured], []),
        Region(entry),
        "private",
        arg_attrs=argument_attributes(4, marks),
    )
    for new in walk_ops(function):
        if isinstance(new.location, UnknownLoc):  # str() of a location costs ~60 us
            new.location = op.location
    return function


def _call_site(op: scf.ParallelOp, name: str, args: list[SSAValue], cost: Work) -> list[Operation]:
    """
    The trip count, the work test and the call of the dispatch stub, told the test.
    `cost` is the work of one iteration, `fixed + per_step * step`, each part capped
    at `PARALLEL_THRESHOLD` (past it any trip count qualifies, and unknown trip counts
    multiplied through a nest would overflow an index constant).
    """
    lb, ub, step = op.lowerBound[0], op.upperBound[0], op.step[0]
    fixed, per_step = (min(part, PARALLEL_THRESHOLD) for part in cost)
    constant_step = constant_index(step)
    if constant_step is not None:
        fixed, per_step = min(max(1, fixed + per_step * constant_step), PARALLEL_THRESHOLD), 0
    ops: list[Operation] = []

    def emit(new: Operation) -> SSAValue:
        ops.append(new)
        return new.results[0]

    zero, one = emit(_index(0)), emit(_index(1))
    span = emit(arith.SubiOp(ub, lb))
    rounded = emit(arith.AddiOp(span, emit(arith.SubiOp(step, one))))  # ceil for step > 0
    count = emit(arith.MaxSIOp(emit(arith.DivSIOp(rounded, step)), zero))
    each = emit(_index(max(1, fixed)))
    if per_step:  # a block's work grows with the block (the step): read it at run time
        blocks = emit(arith.MinSIOp(step, emit(_index(PARALLEL_THRESHOLD))))
        each = emit(arith.AddiOp(each, emit(arith.MuliOp(blocks, emit(_index(per_step))))))
    total = emit(arith.MuliOp(count, each))
    big = emit(arith.CmpiOp(total, emit(_index(PARALLEL_THRESHOLD)), "sge"))
    # One iteration runs on one thread whatever its work: calling the pool for it
    # would only cost the call (a static count of 1 folds to the serial call).
    shared = emit(arith.CmpiOp(count, one, "sgt"))
    big = emit(arith.AndIOp(big, shared))
    ops.append(func.CallOp(name + DISPATCH_SUFFIX, [big, zero, count, lb, step, *args], []))
    return ops


def outline_parallel_loops(module: ModuleOp) -> set[str]:
    """Outline every outermost `scf.parallel` (module docstring); the dispatch names."""
    dispatch: set[str] = set()
    for function in list(module.ops):
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        # Pre-order: a nested loop follows its outermost loop, the last one found.
        outermost: list[scf.ParallelOp] = []
        for op in walk_ops(function):
            if isinstance(op, scf.ParallelOp):
                if not outermost or not outermost[-1].is_ancestor(op):
                    outermost.append(op)
        for n, op in enumerate(outermost):
            name = f"{function.sym_name.data}_parallel{n}"
            needed = captured_values(op)
            captured = [v for v in needed if not _is_constant(v)]
            constants = [v for v in needed if _is_constant(v)]
            site = _call_site(op, name, captured, weigh(op.body.block, op.step[0]))
            for new in site:
                for inner in new.walk():
                    inner.location = op.location
            Rewriter.insert_op(site, InsertPoint.before(op))
            outlined = _outlined(op, name, captured, constants)
            op.detach()
            op.erase()
            declaration = func.FuncOp.external(
                name + DISPATCH_SUFFIX, [i1, *outlined.function_type.inputs.data], []
            )
            declaration.sym_visibility = outlined.sym_visibility
            Rewriter.insert_op([outlined, declaration], InsertPoint.after(function))
            dispatch.add(name + DISPATCH_SUFFIX)
    return dispatch


def _chunk_function(name: str, types: Sequence[Attribute]) -> llvm.FuncOp:
    """`@<name>_chunk(%lo: i64, %hi: i64, %ctx: ptr)`: unpack `ctx`, call `@name`."""
    block = Block(arg_types=[i64, i64, PTR])
    ops: list[Operation] = []
    fields: list[SSAValue] = []
    for k, type_ in enumerate(types):
        slot = llvm_ops.field_address(block.args[2], k, i64)
        if isinstance(type_, llvm.LLVMPointerType):  # stored as an integer (see _link_call)
            load = llvm_ops.load(slot.results[0], i64)
            field = llvm.IntToPtrOp(load.results[0])
            ops += [slot, load, field]
        else:
            address = llvm_ops.field_address(slot.results[0], 0, type_)
            field = llvm_ops.load(address.results[0], type_)
            ops += [slot, address, field]
        fields.append(field.results[0])
    call = llvm.CallOp(name, block.args[0], block.args[1], *fields)
    ops += [call, llvm.ReturnOp()]
    block.add_ops(ops)
    chunk_type = llvm.LLVMFunctionType([i64, i64, PTR], llvm.LLVMVoidType())
    return llvm.FuncOp(
        name + CHUNK_SUFFIX, chunk_type, linkage=llvm.LinkageAttr("internal"), body=Region(block)
    )


def _entry_alloca(call: llvm.CallOp, slots: int) -> SSAValue:
    """`slots` 8-byte stack slots in the entry block of the function around `call`."""
    function = call.parent_op()
    while function is not None and not isinstance(function, llvm.FuncOp):
        function = function.parent_op()
    assert function is not None and function.body.blocks.first is not None
    entry = function.body.blocks.first
    one = constant(1)
    slot = llvm.AllocaOp(one, llvm.LLVMArrayType(max(1, slots), i64), alignment=8)
    first = entry.first_op
    point = InsertPoint.before(first) if first is not None else InsertPoint.at_end(entry)
    Rewriter.insert_op([one, slot], point)
    return slot.res


def _link_call(operands: list[SSAValue], call: llvm.CallOp, target: str, site: str) -> None:
    """Replace one call to a dispatch stub by the struct stores and the branch between
    the runtime call and the serial call of the chunk function, passing `operands` (the
    call's, less those the outlined body does not read) and the address of the global
    `site`, the loop's measured work."""
    big, lo, hi, *rest = operands
    slot = _entry_alloca(call, len(rest))
    stores: list[Operation] = []
    for k, value in enumerate(rest):
        field = llvm_ops.field_address(slot, k, i64)
        # llvmlite types pointers: a slot is addressed as the type stored in it, and a
        # pointer is stored as an integer.
        if isinstance(value.type, llvm.LLVMPointerType):
            as_int = llvm.PtrToIntOp(value, i64)
            stores += [field, as_int, llvm_ops.store(as_int.results[0], field.results[0])]
        else:
            address = llvm_ops.field_address(field.results[0], 0, value.type)
            stores += [field, address, llvm_ops.store(value, address.results[0])]
    block = call.parent_block()
    assert block is not None and block.parent is not None
    after = block.split_before(call)
    chunk = llvm.AddressOfOp(target + CHUNK_SUFFIX, PTR)
    work = llvm.AddressOfOp(site, PTR)
    runtime = llvm.CallOp(RUNTIME_ENTRY, chunk, lo, hi, slot, work)
    parallel = Block(ops=[chunk, work, runtime, llvm_ops.branch(after, [])])
    serial_call = llvm.CallOp(target + CHUNK_SUFFIX, lo, hi, slot)
    serial = Block(ops=[serial_call, llvm_ops.branch(after, [])])
    block.parent.insert_block_before([parallel, serial], after)
    block.add_ops([*stores, llvm_ops.cond_branch(big, parallel, [], serial, [])])
    for new in (*stores, *parallel.ops, *serial.ops, block.last_op):
        new.location = call.location
    call.detach()
    call.erase()


def _forward_fields(function: llvm.FuncOp) -> None:
    """
    Read descriptor fields straight from the arguments inserted into them: an
    `llvm.extractvalue` of a chain of `llvm.insertvalue`s takes the argument inserted
    at its position, and chains left unused are erased. An outlined body rebuilds each
    memref descriptor from its expanded arguments; after this, the arguments of the
    fields it never reads have no uses. (Only arguments: llvmlite gives a pointer that
    a GEP made its element type, and storing a vector through it would not translate.)
    """
    entry = function.body.blocks.first
    for op in walk_ops(function):
        if not isinstance(op, llvm.ExtractValueOp):
            continue
        wanted = tuple(op.position.iter_values())
        source = op.container.owner
        while isinstance(source, llvm.InsertValueOp):
            position = tuple(source.position.iter_values())
            if position == wanted and source.value.owner is not entry:
                break
            if position == wanted:
                op.res.replace_all_uses_with(source.value)
                op.detach()
                op.erase()
                break
            if position[: len(wanted)] == wanted or wanted[: len(position)] == position:
                break  # overlapping fields: left to LLVM
            source = source.container.owner
    for block in function.body.blocks:
        for op in reversed(list(block.ops)):
            if isinstance(op, llvm.InsertValueOp | llvm.UndefOp) and not op.res.uses:
                op.detach()
                op.erase()


def _drop_unused_arguments(function: llvm.FuncOp, calls: Sequence[llvm.CallOp]) -> list[int]:
    """
    Remove the captured arguments (index 2 on) that `function`'s body never reads,
    from it and from `calls` to it; the indices of those kept. Once memrefs are
    expanded most captured fields are dead (static sizes and strides, the allocated
    pointer), and each would otherwise cost a store and a load per dispatch.
    """
    entry = function.body.blocks.first
    assert entry is not None
    _forward_fields(function)
    kept = [k for k, arg in enumerate(entry.args) if k < 2 or arg.uses]
    if len(kept) == len(entry.args):
        return kept
    for arg in [arg for k, arg in enumerate(entry.args) if k not in kept]:
        entry.erase_arg(arg)
    inputs = function.function_type.inputs.data
    function.function_type = llvm.LLVMFunctionType(
        [inputs[k] for k in kept], function.function_type.output
    )
    if function.arg_attrs is not None:
        function.arg_attrs = ArrayAttr([function.arg_attrs.data[k] for k in kept])
    for call in calls:
        operands = list(call.args)
        new = llvm.CallOp(call.callee, *[operands[k] for k in kept])
        new.location = call.location
        Rewriter.replace_op(call, new, [])
    return kept


def link_dispatch_calls(module: ModuleOp, dispatch: set[str]) -> None:
    """Turn calls to the dispatch stubs into `mlc_parallel_for` calls (module docstring)."""
    if not dispatch:
        return
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)}
    calls: dict[str, list[llvm.CallOp]] = {}
    for op in walk_ops(module):
        if isinstance(op, llvm.CallOp) and op.callee is not None:
            calls.setdefault(op.callee.string_value(), []).append(op)
    for name in sorted(dispatch):  # a set: sorted, so the output is deterministic
        stub = functions.get(name)
        if stub is None:
            continue
        target = name.removesuffix(DISPATCH_SUFFIX)
        kept = _drop_unused_arguments(functions[target], calls.get(target, []))
        inputs = stub.function_type.inputs.data[1:]  # after the test's flag
        chunk = _chunk_function(target, [inputs[k] for k in kept[2:]])
        chunk.location = stub.location
        Rewriter.replace_op(stub, chunk)
        for n, call in enumerate(calls.get(name, [])):
            site = f"{target}{WORK_SUFFIX}{n}"
            zero = IntegerAttr(0, i64)
            Rewriter.insert_op(
                llvm.GlobalOp(i64, site, "internal", value=zero), InsertPoint.after(chunk)
            )
            big, *rest = call.operands
            _link_call([big, *(rest[k] for k in kept)], call, target, site)
    runtime_type = llvm.LLVMFunctionType([PTR, i64, i64, PTR, PTR], llvm.LLVMVoidType())
    declaration = llvm.FuncOp(RUNTIME_ENTRY, runtime_type, linkage=llvm.LinkageAttr("external"))
    Rewriter.insert_op(declaration, InsertPoint.at_start(module.body.block))
