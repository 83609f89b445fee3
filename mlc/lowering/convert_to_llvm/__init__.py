"""
convert-to-llvm: lower level-4 IR (loops on memrefs) to the `llvm` dialect.

The last pass before translation to LLVM IR (`mlc.backend.llvm.to_llvmlite`); see
docs/design/lowering.md, levels 4 and 5. Afterwards a module holds only `llvm` ops
and builtin scalar types. `index` becomes `i64`; a memref becomes MLIR's descriptor
`!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>`:

    func.func @f(%m: memref<?xf32>, %i: index) -> f32 {
      %v = memref.load %m[%i] : memref<?xf32>
      func.return %v : f32
    }
==>
    llvm.func @f(%alloc: !llvm.ptr, %aligned: !llvm.ptr, %off: i64, %size: i64,
                 %stride: i64, %i: i64) -> f32 { ...GEP from %aligned, llvm.load... }
    llvm.func @_mlc_invoke_f(%packed: !llvm.ptr) { ...load arguments, call @f... }

Structure: one pattern module per source dialect (`arith`, `math`, `memref`, `func`
with `cf`), shared types and helpers in `common`; `llvm_ops` builds the most frequent
`llvm` ops without xDSL's generic constructor (several times faster); `constants`
keeps one scalar constant per value and type in each function's entry block. Preconditions,
decided here so that `-p convert-to-llvm` takes level 4 as is: the pass first runs
xDSL's `lower-affine` and `convert-scf-to-cf` itself (both do nothing on IR without
affine/scf ops; `lower-affine` and mlc's expansions run only if their ops are there),
after turning `memref.copy`s that are not one memcpy into `scf.for` loops. xDSL's
`convert-scf-to-cf` does not lower `scf.while`, so mlc's `WhileLowering` does that
first. Short scalar loops nested in another loop are marked to stay loops in LLVM
(`loop_hints`). The outermost `scf.parallel` of a function is outlined into a chunk function
that mlc's thread pool runs on all cores (`parallel`); nested ones become `scf.for`
nests. `cf.assert` becomes a branch to a call of the JIT-bound
`mlc_assert_failed` (`assertions`).

The pass checks the whole module before it rewrites anything: an op or a type it cannot
convert stops it with `op_error`, and the module is left as it was. Ops already in the
`llvm` dialect are left alone. Side-effect-free `llvm` ops left unused (descriptor
fields nobody reads) are erased at the end. The C functions the code calls (`malloc`,
`free`, libm's `erf`, ...) are declared once at the top of the module.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

from xdsl.context import Context
from xdsl.dialects import affine, cf, llvm, scf
from xdsl.dialects.arith import CeilDivSIOp, FloorDivSIOp
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.memref import CopyOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.transforms.lower_affine import LowerAffinePass

from mlc.diagnostics import op_error
from mlc.lowering.convert_to_llvm import arith as arith_patterns
from mlc.lowering.convert_to_llvm import assertions, loop_hints
from mlc.lowering.convert_to_llvm import func as func_patterns
from mlc.lowering.convert_to_llvm import math as math_patterns
from mlc.lowering.convert_to_llvm import memref as memref_patterns
from mlc.lowering.convert_to_llvm import parallel as parallel_patterns
from mlc.lowering.convert_to_llvm import power as power_patterns
from mlc.lowering.convert_to_llvm import vector as vector_patterns
from mlc.lowering.convert_to_llvm.bf16 import widen_bf16_accumulators, widen_bf16_arithmetic
from mlc.lowering.convert_to_llvm.common import (
    TypeRecord,
    converted_type,
    descriptor_type,
    llvm_type,
    unsupported_memref_reason,
)
from mlc.lowering.convert_to_llvm.merge_functions import merge_identical_functions
from mlc.lowering.convert_to_llvm.scf_to_cf import convert_scf_to_cf
from mlc.lowering.convert_to_llvm.scf_while import WhileLowering
from mlc.lowering.convert_to_llvm.vector_width import prefer_wide_vectors
from mlc.lowering.support.one_sweep import sweep
from mlc.lowering.support.op_type_dispatch import OpTypeDispatch
from mlc.lowering.support.op_walk import inside, walk_ops
from mlc.tiling_model import host

__all__ = [
    "ConvertToLLVMPass",
    "descriptor_type",
    "llvm_type",
    "unsupported_op_reason",
    "unsupported_type_reason",
]

# Structured control flow the pass lowers first, with xDSL's own passes.
PRE_LOWERED: tuple[type[Operation], ...] = (
    scf.ForOp,
    scf.IfOp,
    scf.IndexSwitchOp,
    scf.YieldOp,
    scf.WhileOp,
    scf.ConditionOp,
    scf.ParallelOp,
    scf.ReduceOp,
    affine.ForOp,
    affine.YieldOp,
    affine.ApplyOp,
    affine.LoadOp,
    affine.StoreOp,
)

AFFINE: tuple[type[Operation], ...] = tuple(c for c in PRE_LOWERED if c.name.startswith("affine."))

SUPPORTED: tuple[type[Operation], ...] = (
    *PRE_LOWERED,
    *arith_patterns.SUPPORTED,
    *math_patterns.SUPPORTED,
    *memref_patterns.SUPPORTED,
    *func_patterns.SUPPORTED,
    *vector_patterns.SUPPORTED,
    *power_patterns.SUPPORTED,
    cf.AssertOp,
)


def unsupported_op_reason(op: Operation) -> str | None:
    """Why convert-to-llvm cannot convert this op, or None when it can."""
    for check in _op_checks(type(op)):
        if (reason := check(op)) is not None:
            return reason
    return None


def _unsupported(op: Operation) -> str:
    return "is not supported by convert-to-llvm yet"


def _assert_in_parallel_loop(op: Operation) -> str | None:
    if inside(op, scf.ParallelOp):
        return "inside scf.parallel is not supported (its failure would be lost on a pool thread)"
    return None


OpCheck = Callable[[Operation], str | None]


@cache
def _op_checks(cls: type[Operation]) -> tuple[OpCheck, ...]:
    """
    The checks an op of class `cls` needs, worked out once per class: the pass checks
    every op of a module before it rewrites any (~23k on ResNet-50), and testing each
    against the ~100 supported classes and then each op-specific check's own classes
    took a tenth of the pass. Each check looks at the classes it is chosen for only.
    """
    if issubclass(cls, ModuleOp) or cls.dialect_name() == "llvm":
        return ()
    if not issubclass(cls, SUPPORTED):
        return (_unsupported,)
    checks: list[OpCheck] = []
    if issubclass(cls, vector_patterns.SUPPORTED):
        checks.append(vector_patterns.unsupported_vector_op_reason)
    if issubclass(cls, scf.ParallelOp):
        checks.append(parallel_patterns.unsupported_parallel_reason)
    if issubclass(cls, cf.AssertOp):
        checks.append(_assert_in_parallel_loop)
    if issubclass(cls, memref_patterns.SUPPORTED):
        checks.append(memref_patterns.unsupported_memref_op_reason)
    return tuple(checks)


def unsupported_type_reason(op: Operation) -> str | None:
    """Why a value `op` defines or uses has a type convert-to-llvm cannot convert."""
    if isinstance(op, ModuleOp) or op.dialect_name() == "llvm":
        return None
    values = [*op.operands, *op.results]
    values += [arg for region in op.regions for block in region.blocks for arg in block.args]
    types = [value.type for value in values]
    if isinstance(op, func_patterns.func.FuncOp):  # a declaration has no block arguments
        types += [*op.function_type.inputs, *op.function_type.outputs]
    for type_ in types:
        if (reason := _type_reason(type_)) is not None:
            return reason
    return None


@lru_cache(maxsize=4096)  # bounded: a long-running process compiles many programs
def _type_reason(type_: Attribute) -> str | None:
    """
    Why convert-to-llvm cannot convert `type_`, or None. Types are values (equal types
    hash equal, and none changes), so each distinct type is judged once: a module
    has a few dozen, on ~100k operands and results.
    """
    if isinstance(type_, MemRefType):
        return unsupported_memref_reason(type_)
    if converted_type(type_) is None:
        return (
            f"on type {type_} is not supported by convert-to-llvm yet "
            "(integer, index, f16/f32/f64 scalars and memrefs of them are)"
        )
    return None


def _declare_c_functions(module: ModuleOp, record: TypeRecord) -> None:
    """Declare `malloc`, `free`, ... once, unless the module already has the symbol."""
    present = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    for name, type_ in sorted(record.declarations.items()):
        if name not in present:
            declaration = llvm.FuncOp(name, type_, linkage=llvm.LinkageAttr("external"))
            Rewriter.insert_op(declaration, InsertPoint.at_start(module.body.block))


def _erase_unused_values(module: ModuleOp) -> None:
    """
    Erase the ops the conversion leaves unused and without effects (descriptor fields
    nobody reads, of results or of memrefs a parallel loop's body does not touch, and
    the arithmetic that computed them), last block first, so chains go in one sweep.
    """
    for function in module.ops:
        if not isinstance(function, llvm.FuncOp):
            continue
        for block in reversed(function.body.blocks):
            for inner in reversed(list(block.ops)):
                if is_trivially_dead(inner):
                    inner.detach()
                    inner.erase()


@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """Lower loops on memrefs (level 4) to the llvm dialect (see the module docstring)."""

    name = "convert-to-llvm"

    libdevice: bool = False
    """The module's functions are GPU kernels: f32/f16 `exp` and `erf` become calls that
    the PTX translation redirects to libdevice (`mlc.lowering.convert_to_llvm.math`)."""

    vector_bits: int = 0
    """The widest vector of the CPU the code is for (0: the host's, `tiling_model.host`):
    functions with FMAs this wide vectorise at it (`vector_width`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Check everything before rewriting anything, so a failure leaves the module
        # as it was; an unsupported op is named before the types around it.
        nested = walk_ops(op)  # listed once: each walk of ResNet-50's ~23k ops counts
        for check in (unsupported_op_reason, unsupported_type_reason):
            for inner in nested:
                if (reason := check(inner)) is not None:
                    op_error(inner, reason)
        widen_bf16_accumulators(op)  # loop sums of bf16 in f32, rounded once
        widen_bf16_arithmetic(op)  # bf16 math in f32, so only moves and casts stay bf16
        # Each expansion walks the module only if it holds an op the expansion rewrites:
        # a walk that finds nothing still costs ~0.1 s on ResNet-50, and most modules
        # have no copy to expand, no power, no affine op and no `scf.while`.
        present = {type(inner) for inner in walk_ops(op)}
        for expansion, classes in (
            (memref_patterns.CopyToLoops(), (CopyOp,)),
            (arith_patterns.ExpandRoundingDivision(), (FloorDivSIOp, CeilDivSIOp)),
            (power_patterns.ExpandPower(), power_patterns.SUPPORTED),
            (LowerAffinePass(), AFFINE),
            (WhileLowering(), (scf.WhileOp,)),
        ):
            if any(issubclass(cls, classes) for cls in present):
                if isinstance(expansion, ModulePass):
                    expansion.apply(ctx, op)
                else:
                    PatternRewriteWalker(expansion).rewrite_module(op)
                present = {type(inner) for inner in walk_ops(op)}  # with what it made
        dispatch = parallel_patterns.outline_parallel_loops(op)
        outlined = {name.removesuffix(parallel_patterns.DISPATCH_SUFFIX) for name in dispatch}
        merged = merge_identical_functions(op, outlined, [parallel_patterns.DISPATCH_SUFFIX])
        dispatch -= {name + parallel_patterns.DISPATCH_SUFFIX for name in merged}
        PatternRewriteWalker(parallel_patterns.SerialParallel()).rewrite_module(op)
        if not self.libdevice:  # GPU kernels' loops are left to NVPTX's own heuristics
            loop_hints.mark_short_loops(op)
        convert_scf_to_cf(op)  # xDSL's pass, its dead-code check per op class
        record = TypeRecord(
            {inner: tuple(v.type for v in inner.operands) for inner in walk_ops(op)}
        )
        assertions.lower_asserts(op, record)
        patterns: list[RewritePattern] = [
            func_patterns.ConvertFunc(),
            func_patterns.ConvertReturnAndCall(record),
            func_patterns.ConvertBranch(),
            arith_patterns.ConvertConstant(record),
            arith_patterns.ConvertBinary(),
            arith_patterns.ConvertCompareAndSelect(),
            arith_patterns.ConvertCast(),
            math_patterns.ConvertMath(record, self.libdevice),
            memref_patterns.ConvertAlloc(record),
            memref_patterns.ConvertDealloc(record),
            memref_patterns.ConvertLoadStore(record),
            memref_patterns.ConvertDim(record),
            memref_patterns.ConvertCopy(record),
            memref_patterns.ConvertGlobal(),
            memref_patterns.ConvertGetGlobal(record),
            memref_patterns.ConvertView(record),
            memref_patterns.ConvertCast(),
            memref_patterns.ConvertExtractAlignedPointer(record),
            vector_patterns.ConvertVector(record),
        ]
        # Converted ops are tried on no pattern. The patterns emit only `llvm` ops, so
        # one sweep converts everything: the ops it inserts are not visited, nor is
        # the module swept again to find nothing left (a third of the walk's time).
        dispatch_by_type = OpTypeDispatch(patterns, finished=["llvm"])
        sweep(op, dispatch_by_type)  # xDSL's non-recursive walk, without its worklist
        if any(inner.dialect_name() != "llvm" for inner in walk_ops(op)[1:]):
            PatternRewriteWalker(GreedyRewritePatternApplier([dispatch_by_type])).rewrite_module(op)
        parallel_patterns.link_dispatch_calls(op, dispatch)
        if not self.libdevice:
            prefer_wide_vectors(op, self.vector_bits or host().vector_bits)
        _erase_unused_values(op)
        _declare_c_functions(op, record)
