"""
Lower scalar `func`, `arith` and `cf` code to the `llvm` dialect (first slice of the CPU backend).

The last pass before translation to LLVM IR (`mlc.backend.llvm.to_llvmlite`): after it,
a module holds only `llvm` ops and builtin scalar types, which xDSL's `convert_module`
turns into an llvmlite module. `index` becomes `i64` (the host's pointer width), in op
results and in block arguments alike, so no `unrealized_conversion_cast` is ever made:

    func.func @f(%n: index) -> index {         llvm.func @f(%n: i64) -> i64 {
      %c = arith.constant 1 : index               %c = llvm.mlir.constant(1 : i64) : i64
      %s = arith.addi %n, %c : index     ==>      %s = llvm.add %n, %c : i64
      func.return %s : index                      llvm.return %s : i64
    }                                           }

Precondition: structured control flow is gone (run xDSL's `convert-scf-to-cf` first, so
`scf.for`/`scf.if` arrive as `cf.br`/`cf.cond_br` between blocks). The pass checks the
whole module before it rewrites anything: an op or a type it cannot convert yet
(tensors, memrefs, `math`, multi-result functions, ...) stops it with `op_error`, and the
module is left as it was. Ops already in the `llvm` dialect are left alone.

Semantics worth knowing: `arith.fptosi` becomes `llvm.fptosi.sat` (no plain `fptosi` op in
xDSL's `llvm` dialect; the saturating form agrees wherever `fptosi` is defined); overflow
and fast-math flags are dropped (conservative: LLVM may assume less, never more).
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc.diagnostics import op_error

# ---------------------------------------------------------------------------
# Pure helpers: types, op tables and the up-front support check
# ---------------------------------------------------------------------------


def llvm_type(type_: Attribute) -> Attribute | None:
    """The LLVM-dialect type of a scalar type (`index` is `i64`), or None if not scalar."""
    if isinstance(type_, IndexType):
        return i64
    if isinstance(type_, IntegerType | AnyFloat):
        return type_
    return None


def _converted(type_: Attribute) -> Attribute:
    """`llvm_type` for a type the support check has already accepted."""
    converted = llvm_type(type_)
    assert converted is not None, "checked by unsupported_type_reason before rewriting"
    return converted


BINARY_OPS: dict[type[Operation], Callable[[SSAValue, SSAValue], Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    arith.MaxnumfOp: llvm.VectorFMaxOp,  # llvm.intr.maxnum, scalar or vector
    arith.MinnumfOp: llvm.VectorFMinOp,
}

# Casts that map one-to-one onto an LLVM cast op (index_cast and fptosi are special).
CAST_OPS: dict[type[Operation], type[llvm.GenericCastOp | llvm.IntegerConversionOp]] = {
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
}

_OTHER_SUPPORTED: tuple[type[Operation], ...] = (
    func.FuncOp,
    func.ReturnOp,
    func.CallOp,
    arith.ConstantOp,
    arith.CmpiOp,
    arith.CmpfOp,
    arith.SelectOp,
    arith.IndexCastOp,
    arith.FPToSIOp,
    cf.BranchOp,
    cf.ConditionalBranchOp,
)


def unsupported_op_reason(op: Operation) -> str | None:
    """Why convert-to-llvm cannot convert an op of this kind yet, or None when it can."""
    if isinstance(op, ModuleOp) or op.dialect_name() == "llvm":
        return None
    kind = type(op)
    if kind not in BINARY_OPS and kind not in CAST_OPS and kind not in _OTHER_SUPPORTED:
        return "is not supported by convert-to-llvm yet"
    if isinstance(op, func.FuncOp) and len(op.function_type.outputs) > 1:
        return "with several results is not supported by convert-to-llvm yet"
    return None


def unsupported_type_reason(op: Operation) -> str | None:
    """Why a value `op` defines or uses has a type convert-to-llvm cannot convert yet."""
    if isinstance(op, ModuleOp) or op.dialect_name() == "llvm":
        return None
    values = [*op.operands, *op.results]
    values += [arg for region in op.regions for block in region.blocks for arg in block.args]
    types = [value.type for value in values]
    if isinstance(op, func.FuncOp):  # a declaration has no block arguments
        types += [*op.function_type.inputs, *op.function_type.outputs]
    for type_ in types:
        if llvm_type(type_) is None:
            return (
                f"on type {type_} is not supported by convert-to-llvm yet "
                "(only integer, index and float scalars are)"
            )
    return None


def _replace(rewriter: PatternRewriter, op: Operation, new_ops: list[Operation]) -> None:
    """Replace `op` by `new_ops` (the last gives the results), keeping its location (R11)."""
    for new in new_ops:
        new.location = op.location
    rewriter.replace(op, new_ops)


# ---------------------------------------------------------------------------
# Patterns, one per op family
# ---------------------------------------------------------------------------


class ConvertFunc(RewritePattern):
    """`func.func` -> `llvm.func` (external linkage, so the JIT can find it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /) -> None:
        inputs = [_converted(t) for t in op.function_type.inputs]
        outputs = [_converted(t) for t in op.function_type.outputs]
        result = outputs[0] if outputs else llvm.LLVMVoidType()
        for block in op.body.blocks:  # every block's arguments, so phis get i64 too
            for arg in block.args:
                if arg.type != (new_type := _converted(arg.type)):
                    rewriter.replace_value_with_new_type(arg, new_type)
        body = rewriter.move_region_contents_to_new_regions(op.body)
        new = llvm.FuncOp(
            op.sym_name,
            llvm.LLVMFunctionType(inputs, result),
            linkage=llvm.LinkageAttr("external"),
            body=body,
        )
        _replace(rewriter, op, [new])


class ConvertFuncReturnAndCall(RewritePattern):
    """`func.return` -> `llvm.return`; `func.call` -> `llvm.call`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, func.ReturnOp):
            _replace(rewriter, op, [llvm.ReturnOp(op.arguments[0] if op.arguments else None)])
        elif isinstance(op, func.CallOp):
            result = _converted(op.res[0].type) if op.res else None
            new = llvm.CallOp(op.callee.string_value(), *op.arguments, return_type=result)
            _replace(rewriter, op, [new])


class ConvertConstant(RewritePattern):
    """`arith.constant` -> `llvm.mlir.constant` (index constants become i64)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /) -> None:
        type_ = _converted(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
            value = IntegerAttr(value.value.data, i64)
        _replace(rewriter, op, [llvm.ConstantOp(value, type_)])


class ConvertBinary(RewritePattern):
    """Integer and float binary arith ops -> the matching llvm op (flags dropped)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (make := BINARY_OPS.get(type(op))) is None:
            return  # not a binary op of this family
        _replace(rewriter, op, [make(op.operands[0], op.operands[1])])


class ConvertCompareAndSelect(RewritePattern):
    """`arith.cmpi`/`cmpf` -> `llvm.icmp`/`fcmp` (same predicate numbering); `select`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, arith.CmpiOp):
            _replace(rewriter, op, [llvm.ICmpOp(op.lhs, op.rhs, op.predicate)])
        elif isinstance(op, arith.CmpfOp):
            predicate = op.predicate.value.data
            if predicate in (0, 15):  # "false"/"true": a constant, which llvmlite needs
                _replace(rewriter, op, [llvm.ConstantOp(IntegerAttr(predicate // 15, i1), i1)])
                return
            _replace(rewriter, op, [llvm.FCmpOp(op.lhs, op.rhs, op.predicate)])
        elif isinstance(op, arith.SelectOp):
            _replace(rewriter, op, [llvm.SelectOp(op.cond, op.lhs, op.rhs)])


class ConvertCast(RewritePattern):
    """Scalar casts; `index_cast` is a sext/trunc to or from i64, or nothing at all."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (make := CAST_OPS.get(type(op))) is not None:
            _replace(rewriter, op, [make(op.operands[0], _converted(op.results[0].type))])
        elif isinstance(op, arith.FPToSIOp):
            result = _converted(op.result.type)
            name = f"llvm.fptosi.sat.{result}.{op.input.type}"  # prints as i32, f64, ...
            _replace(rewriter, op, [llvm.CallIntrinsicOp(name, [op.input], [result])])
        elif isinstance(op, arith.IndexCastOp):
            source = _converted(op.input.type)
            result = _converted(op.result.type)
            assert isinstance(source, IntegerType) and isinstance(result, IntegerType)
            if source.width.data == result.width.data:
                rewriter.replace(op, [], [op.input])  # i64 <-> index: same bits
            elif source.width.data > result.width.data:
                _replace(rewriter, op, [llvm.TruncOp(op.input, result)])
            else:
                _replace(rewriter, op, [llvm.SExtOp(op.input, result)])


class ConvertBranch(RewritePattern):
    """`cf.br` -> `llvm.br`; `cf.cond_br` -> `llvm.cond_br` (block arguments become phis)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, cf.BranchOp):
            _replace(rewriter, op, [llvm.BrOp(op.successor, *op.arguments)])
        elif isinstance(op, cf.ConditionalBranchOp):
            new = llvm.CondBrOp(
                op.cond, op.then_block, op.then_arguments, op.else_block, op.else_arguments
            )
            _replace(rewriter, op, [new])


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """Lower scalar func/arith/cf code to the llvm dialect (see the module docstring)."""

    name = "convert-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Check everything before rewriting anything, so a failure leaves the module
        # as it was; an unsupported op is named before the types around it.
        for check in (unsupported_op_reason, unsupported_type_reason):
            for inner in op.walk():
                if (reason := check(inner)) is not None:
                    op_error(inner, reason)
        patterns: list[RewritePattern] = [
            ConvertFunc(),
            ConvertFuncReturnAndCall(),
            ConvertConstant(),
            ConvertBinary(),
            ConvertCompareAndSelect(),
            ConvertCast(),
            ConvertBranch(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)

