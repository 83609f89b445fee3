"""
`func` and `cf` -> `llvm`, in MLIR's calling convention, plus the packed entry wrappers.

A memref argument is passed as its descriptor's fields (allocated pointer, aligned
pointer, offset, sizes..., strides...), as MLIR's `convert-func-to-llvm` does, and the
entry block packs them back into a struct. One result is returned as is, several as a
struct. A memref argument marked `llvm.noalias` (`distinct_buffers`) has its aligned
pointer marked. For every public function with a body, `@_mlc_invoke_<name>(%packed: !llvm.ptr)`
reads argument `i` through the pointer `packed[i]` (to a descriptor struct or a scalar),
calls the function and writes result `j` through `packed[n_args + j]`: one C signature
for every function, which the backend calls through ctypes. A function with the unit
attribute `no_inline` (the shared micro-kernels and packings) becomes an `llvm.func`
with `no_inline`, which LLVM then keeps out of its callers.
"""

from collections.abc import Sequence

from xdsl.dialects import cf, func, llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, UnitAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mlc.lowering.convert_to_llvm import llvm_ops
from mlc.lowering.convert_to_llvm.common import (
    ALIGNED,
    ALLOCATED,
    OFFSET,
    PTR,
    SIZES,
    STRIDES,
    Builder,
    TypeRecord,
    converted_type,
    pack_descriptor,
    replace,
)
from mlc.lowering.convert_to_llvm.distinct_buffers import NOALIAS, is_noalias
from mlc.lowering.convert_to_llvm.loop_hints import UNROLL_DISABLE

SUPPORTED: tuple[type[Operation], ...] = (
    func.FuncOp,
    func.ReturnOp,
    func.CallOp,
    cf.BranchOp,
    cf.ConditionalBranchOp,
)

INVOKE_PREFIX = "_mlc_invoke_"


def _converted(type_: Attribute) -> Attribute:
    new = converted_type(type_)
    assert new is not None, "checked before rewriting"
    return new


def expanded_types(type_: Attribute) -> list[Attribute]:
    """The LLVM argument types one function argument is passed as."""
    if isinstance(type_, MemRefType):
        rank = type_.get_num_dims()
        return [PTR, PTR, i64, *[i64] * (2 * rank)]
    return [_converted(type_)]


def expanded_attributes(
    attrs: ArrayAttr[DictionaryAttr] | None, inputs: Sequence[Attribute]
) -> ArrayAttr[DictionaryAttr] | None:
    """The `arg_attrs` of the expanded arguments: a memref's `llvm.noalias` goes to its
    aligned pointer, the one accesses go through (`distinct_buffers`); other attributes
    are not carried."""
    if attrs is None or not any(is_noalias(attrs, k) for k in range(len(inputs))):
        return None
    empty: dict[str, Attribute] = {}
    expanded: list[DictionaryAttr] = []
    for k, type_ in enumerate(inputs):
        fields = [DictionaryAttr(empty)] * len(expanded_types(type_))
        if is_noalias(attrs, k):
            fields[1] = DictionaryAttr({NOALIAS: UnitAttr()})
        expanded += fields
    return ArrayAttr(expanded)


def result_type(outputs: Sequence[Attribute]) -> Attribute:
    """void, the one result's type, or a struct of several."""
    if not outputs:
        return llvm.LLVMVoidType()
    if len(outputs) == 1:
        return _converted(outputs[0])
    return llvm.LLVMStructType.from_type_list([_converted(t) for t in outputs])


def function_type(
    inputs: Sequence[Attribute], outputs: Sequence[Attribute]
) -> llvm.LLVMFunctionType:
    flat = [t for type_ in inputs for t in expanded_types(type_)]
    return llvm.LLVMFunctionType(flat, result_type(outputs))


def expand_arguments(
    b: Builder, values: Sequence[SSAValue], types: Sequence[Attribute]
) -> list[SSAValue]:
    """Call arguments in the expanded convention: descriptor structs split into fields."""
    args: list[SSAValue] = []
    for value, type_ in zip(values, types, strict=True):
        if not isinstance(type_, MemRefType):
            args.append(value)
            continue
        rank = type_.get_num_dims()
        args += [b.extract(value, PTR, ALLOCATED), b.extract(value, PTR, ALIGNED)]
        args.append(b.extract(value, i64, OFFSET))
        args += [b.extract(value, i64, SIZES, dim) for dim in range(rank)]
        args += [b.extract(value, i64, STRIDES, dim) for dim in range(rank)]
    return args


def unpack_results(
    b: Builder, call: SSAValue | None, outputs: Sequence[Attribute]
) -> list[SSAValue]:
    """The values of a call's results: the call itself, or the fields of its struct."""
    if len(outputs) <= 1:
        return [] if call is None else [call]
    assert call is not None
    return [b.extract(call, _converted(t), j) for j, t in enumerate(outputs)]


def invoke_wrapper(
    name: str, inputs: Sequence[Attribute], outputs: Sequence[Attribute]
) -> llvm.FuncOp:
    """`@_mlc_invoke_<name>(%packed)`: see the module docstring."""
    block = Block(arg_types=[PTR])
    packed = block.args[0]
    b = Builder()

    def slot(index: int) -> SSAValue:
        address = b.emit(llvm.GEPOp(packed, [index], PTR))
        return b.emit(llvm.LoadOp(address, PTR))

    values = [b.emit(llvm.LoadOp(slot(i), _converted(t))) for i, t in enumerate(inputs)]
    call = b.call(name, expand_arguments(b, values, inputs), _maybe_void(result_type(outputs)))
    for j, value in enumerate(unpack_results(b, call, outputs)):
        b.ops.append(llvm.StoreOp(value, slot(len(inputs) + j)))
    b.ops.append(llvm.ReturnOp())
    block.add_ops(b.ops)
    wrapper_type = llvm.LLVMFunctionType([PTR], llvm.LLVMVoidType())
    return llvm.FuncOp(
        INVOKE_PREFIX + name, wrapper_type, linkage=llvm.LinkageAttr("external"), body=Region(block)
    )


def _maybe_void(type_: Attribute) -> Attribute | None:
    return None if isinstance(type_, llvm.LLVMVoidType) else type_


class ConvertFunc(RewritePattern):
    """`func.func` -> `llvm.func` (+ its entry wrapper when public and defined)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /) -> None:
        inputs = op.function_type.inputs.data
        outputs = op.function_type.outputs.data
        for block in list(op.body.blocks)[1:]:  # later blocks' arguments become phis of LLVM type
            for arg in block.args:
                if arg.type != (new_type := _converted(arg.type)):
                    rewriter.replace_value_with_new_type(arg, new_type)
        if op.body.blocks:
            self._expand_entry_arguments(op, rewriter)
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        defined = bool(op.body.blocks)
        linkage = "internal" if private and defined else "external"
        body = rewriter.move_region_contents_to_new_regions(op.body)
        name = op.sym_name.data
        # `no_inline` (a unit attribute, as MLIR's func.func has): kept out of its callers
        no_inline = {"no_inline": UnitAttr()} if "no_inline" in op.attributes else None
        function = llvm.FuncOp(
            name,
            function_type(inputs, outputs),
            linkage=llvm.LinkageAttr(linkage),
            body=body,
            other_props=no_inline,
        )
        function.arg_attrs = expanded_attributes(op.arg_attrs, inputs)
        new_ops: list[Operation] = [function]
        if defined and not private:
            new_ops.append(invoke_wrapper(name, inputs, outputs))
        new_ops[0].location = op.location  # the moved body keeps its own locations
        for new in new_ops[1:]:
            for inner in new.walk():
                inner.location = op.location
        rewriter.replace(op, new_ops, [])

    def _expand_entry_arguments(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        """Give each memref argument its descriptor fields; rebuild the struct up front."""
        entry = op.body.blocks.first
        assert entry is not None
        b = Builder()
        position = 0
        for arg in list(entry.args):
            if not isinstance(arg.type, MemRefType):
                if arg.type != (new_type := _converted(arg.type)):
                    rewriter.replace_value_with_new_type(arg, new_type)
                position += 1
                continue
            rank = arg.type.get_num_dims()
            fields = [
                rewriter.insert_block_argument(entry, position + k, t)
                for k, t in enumerate(expanded_types(arg.type))
            ]
            position += len(fields)
            struct = pack_descriptor(
                b, rank, fields[0], fields[1], fields[2], fields[3 : 3 + rank], fields[3 + rank :]
            )
            rewriter.replace_all_uses_with(arg, struct)
            rewriter.erase_block_argument(arg)
        for new in b.ops:
            new.location = op.location
        if b.ops:
            rewriter.insert(b.ops, InsertPoint.at_start(entry))


class ConvertReturnAndCall(RewritePattern):
    """`func.return` -> `llvm.return` (a struct for several); `func.call` -> `llvm.call`."""

    def __init__(self, record: TypeRecord):
        self.record = record

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        b = self.record.builder(op)
        if isinstance(op, func.ReturnOp):
            types = self.record.operand_types[op]
            if len(op.arguments) > 1:
                struct = b.emit(llvm.UndefOp(result_type(types)))
                for j, value in enumerate(op.arguments):
                    struct = b.insert(struct, value, j)
                b.ops.append(llvm.ReturnOp(struct))
            else:
                b.ops.append(llvm.ReturnOp(op.arguments[0] if op.arguments else None))
            replace(rewriter, op, b.ops, [])
        elif isinstance(op, func.CallOp):
            outputs = [result.type for result in op.res]
            args = expand_arguments(b, op.arguments, self.record.operand_types[op])
            call = b.call(op.callee.string_value(), args, _maybe_void(result_type(outputs)))
            results = unpack_results(b, call, outputs)
            replace(rewriter, op, b.ops, results)


class ConvertBranch(RewritePattern):
    """`cf.br` -> `llvm.br`; `cf.cond_br` -> `llvm.cond_br` (block arguments become phis)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, cf.BranchOp):
            new = llvm_ops.branch(op.successor, op.arguments)
            if UNROLL_DISABLE in op.attributes:  # a loop's back edge (`loop_hints`)
                new.attributes[UNROLL_DISABLE] = op.attributes[UNROLL_DISABLE]
            replace(rewriter, op, [new])
        elif isinstance(op, cf.ConditionalBranchOp):
            new = llvm_ops.cond_branch(
                op.cond, op.then_block, op.then_arguments, op.else_block, op.else_arguments
            )
            replace(rewriter, op, [new])
