"""
Translate an `llvm`-dialect module to LLVM IR (an llvmlite module).

A translation, not a pass (R1): it leaves MLIR. It is xDSL's `convert_module` with the
host's target triple, so the JIT and ahead-of-time output agree on the ABI. The input
must hold only `llvm.func`/`llvm.mlir.global` at the top level; run `convert-to-llvm`
first. Anything xDSL cannot translate becomes an `LLVMTranslationError` naming the op,
instead of a bare `NotImplementedError` from deep inside xDSL.

mlc extends xDSL's translator here (never by editing xDSL) where it falls short of what
`convert-to-llvm` emits: `llvm.fcmp` with the `ord`/`uno` predicates (xDSL passes them
to llvmlite mangled), `llvm.mlir.global`'s `alignment` (xDSL drops it; memref globals
want 64 bytes, as allocations get), function linkage (xDSL makes every function
external), `noinline` and the `passthrough` string attributes (xDSL drops them),
fast-math flags in a fixed order (xDSL's changes from process to process), `llvm.noalias`
arguments (xDSL drops argument attributes), loop metadata (`llvm.loop.unroll.disable` on
a back edge that `convert_to_llvm.loop_hints` marked), and dense global data: xDSL prints
each element as a typed constant, 4.5 s
for a million floats, where the raw bytes as one `c"..."` string take 0.2 s (pointers are
opaque, so the global's LLVM type is free to be a byte array). `EXTRA_OPS` maps an op to
its translation; function bodies are translated by `_convert_body`, which tries those
first, then xDSL's own translation of the op's class (`BY_CLASS`, for the frequent ops
that xDSL's `convert_op` reaches only after a dozen or more failed `case`s: ResNet-50's
kernels make 15k intrinsic calls and 6k each of GEPs and struct reads), and falls back
to xDSL's `convert_op`. xDSL has no `llvm.addrspacecast`: an
`llvm.mlir.addressof` typed `!llvm.ptr` of a global in another address space (GPU shared
memory) is translated as that global's generic address, an `addrspacecast`; such a
global with no initial value is defined `undef` (shared memory has none).
"""

from collections.abc import Callable, Iterable

import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
from xdsl.backend.llvm import convert_op as xdsl_ops
from xdsl.backend.llvm.convert import convert_module
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import LLVMTranslationException

ValueMap = dict[SSAValue, llvm_ir.Value]
NOALIAS = "llvm.noalias"
UNROLL_DISABLE = "mlc.unroll_disable"  # `convert_to_llvm.loop_hints.UNROLL_DISABLE`


def _convert_fcmp(op: llvm.FCmpOp, builder: llvm_ir.IRBuilder, values: ValueMap) -> bool:
    """`fcmp ord`/`uno`, which llvmlite spells as such; False for the other predicates."""
    predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
    if predicate not in ("ord", "uno"):
        return False
    values[op.res] = builder.fcmp_ordered(predicate, values[op.lhs], values[op.rhs])
    return True


def _convert_addressof(op: llvm.AddressOfOp, builder: llvm_ir.IRBuilder, values: ValueMap) -> bool:
    """The generic address of a global in another address space; False for the others."""
    variable = builder.module.get_global(op.global_name.root_reference.data)
    wanted = op.result.type
    assert isinstance(wanted, llvm.LLVMPointerType)
    space = wanted.addr_space.data if isinstance(wanted.addr_space, IntAttr) else 0
    if variable.type.addrspace == space:
        return False
    values[op.result] = builder.addrspacecast(variable, llvm_ir.PointerType(addrspace=space))
    return True


def _convert_call_intrinsic(
    op: llvm.CallIntrinsicOp, builder: llvm_ir.IRBuilder, values: ValueMap
) -> bool:
    """xDSL's translation, looking the intrinsic's declaration up before building its
    type (a few dozen intrinsics, called 15k times in ResNet-50's kernels); False for
    what xDSL refuses (operand bundles, fast-math flags), so that it says why."""
    if op.op_bundle_operands or op.op_bundle_sizes or any(op.fastmathFlags.data):
        return False
    args = [values[arg] for arg in op.args]
    name = op.intrin.data
    try:
        intrinsic = builder.module.get_global(name)
    except KeyError:
        result = llvm_ir.VoidType() if op.ress is None else convert_type(op.ress.type)
        declared = llvm_ir.FunctionType(result, [arg.type for arg in args])
        intrinsic = llvm_ir.Function(builder.module, declared, name=name)
    call = builder.call(intrinsic, args)
    if op.ress is not None:
        values[op.ress] = call
    return True


def _convert_float_binary(
    op: llvm.AbstractFloatArithOp, builder: llvm_ir.IRBuilder, values: ValueMap
) -> bool:
    """A float binary op with fast-math flags, the flags in LLVM's order: xDSL lists the
    attribute's set, in an order that changes from process to process (string hashing),
    and the LLVM IR text with it, which is the PTX cache's key. False without flags."""
    present = op.fastmathFlags.data if op.fastmathFlags else frozenset()
    if not present:
        return False
    flags = [flag.value for flag in FastMathFlag if flag in present]
    build = xdsl_ops._BINARY_OP_MAP[type(op)](builder)  # pyright: ignore[reportPrivateUsage]
    values[op.results[0]] = build(values[op.lhs], values[op.rhs], flags=flags)
    return True


EXTRA_OPS: dict[type[Operation], Callable[..., bool]] = {
    llvm.FCmpOp: _convert_fcmp,
    llvm.AddressOfOp: _convert_addressof,
    llvm.CallIntrinsicOp: _convert_call_intrinsic,
    **{
        kind: _convert_float_binary
        for kind in xdsl_ops._BINARY_OP_MAP  # pyright: ignore[reportPrivateUsage]
        if issubclass(kind, llvm.AbstractFloatArithOp)
    },
}


def _extract_value(op: llvm.ExtractValueOp, builder: llvm_ir.IRBuilder, values: ValueMap) -> None:
    position = list(op.position.iter_values())
    values[op.results[0]] = builder.extract_value(values[op.container], position)


def _insert_value(op: llvm.InsertValueOp, builder: llvm_ir.IRBuilder, values: ValueMap) -> None:
    position = list(op.position.iter_values())
    container, value = values[op.container], values[op.value]
    values[op.results[0]] = builder.insert_value(container, value, position)


# xDSL's translations of these classes (what its `convert_op` runs for them), by class;
# branches also take the block map.
BY_CLASS: dict[type[Operation], Callable[..., None]] = {
    llvm.ExtractValueOp: _extract_value,
    llvm.InsertValueOp: _insert_value,
    llvm.GEPOp: xdsl_ops._convert_getelementptr,  # pyright: ignore[reportPrivateUsage]
    llvm.LoadOp: xdsl_ops._convert_load,  # pyright: ignore[reportPrivateUsage]
    llvm.StoreOp: xdsl_ops._convert_store,  # pyright: ignore[reportPrivateUsage]
    llvm.ShuffleVectorOp: xdsl_ops._convert_shuffle_vector,  # pyright: ignore[reportPrivateUsage]
    llvm.SelectOp: xdsl_ops._convert_select,  # pyright: ignore[reportPrivateUsage]
}
BRANCHES: dict[type[Operation], Callable[..., None]] = {
    llvm.BrOp: xdsl_ops._convert_br,  # pyright: ignore[reportPrivateUsage]
    llvm.CondBrOp: xdsl_ops._convert_condbr,  # pyright: ignore[reportPrivateUsage]
}


def _convert_body(op: llvm.FuncOp, function: llvm_ir.Function) -> None:
    """Translate one function body (xDSL's `_convert_func`, each op by `_convert_one`)."""
    blocks: dict[Block, llvm_ir.Block] = {}
    values: ValueMap = {}
    for index, block in enumerate(op.body.blocks):
        blocks[block] = function.append_basic_block(name=block.name_hint or "")
        if index == 0:
            values.update(zip(block.args, function.args))
    for block in list(op.body.blocks)[1:]:  # block arguments become phis
        builder = llvm_ir.IRBuilder(blocks[block])
        for arg in block.args:
            values[arg] = builder.phi(convert_type(arg.type))
    for block in op.body.blocks:
        builder = llvm_ir.IRBuilder(blocks[block])
        if blocks[block].instructions:
            builder.position_after(blocks[block].instructions[-1])
        for inner in block.ops:
            _convert_one(inner, builder, values, blocks)
        last = block.last_op
        if last is not None and UNROLL_DISABLE in last.attributes:
            blocks[block].terminator.set_metadata("llvm.loop", _unroll_disabled(function.module))


def _unroll_disabled(module: llvm_ir.Module) -> llvm_ir.MDValue:
    """A new loop ID `!N = !{!N, !{!"llvm.loop.unroll.disable"}}` (one per loop: a
    loop ID is distinct, its first operand itself)."""
    disable = module.add_metadata([llvm_ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    loop = llvm_ir.values.MDValue(module, [], name=str(len(module.metadata)))
    loop.operands = (loop, disable)
    return loop


def _convert_one(
    op: Operation, builder: llvm_ir.IRBuilder, values: ValueMap, blocks: dict[Block, llvm_ir.Block]
) -> None:
    """One op of a body: `EXTRA_OPS`, else `BY_CLASS`/`BRANCHES`, else xDSL's `convert_op`."""
    kind = type(op)
    extra = EXTRA_OPS.get(kind)
    if extra is not None and extra(op, builder, values):
        return
    if (direct := BY_CLASS.get(kind)) is not None:
        direct(op, builder, values)
    elif (branch := BRANCHES.get(kind)) is not None:
        branch(op, builder, values, blocks)
    else:
        convert_op(op, builder, values, blocks)


def _byte_initialised(op: Operation) -> bool:
    """A global whose dense data can be copied as raw bytes (not i1: xDSL packs it as 0xff)."""
    if not isinstance(op, llvm.GlobalOp) or not isinstance(op.value, DenseIntOrFPElementsAttr):
        return False
    element = op.value.get_element_type()
    return not (isinstance(element, IntegerType) and element.width.data == 1)


def _add_byte_global(op: llvm.GlobalOp, module: llvm_ir.Module) -> None:
    """The global as an i8 array initialised from its dense data's bytes."""
    assert isinstance(op.value, DenseIntOrFPElementsAttr)
    data = bytearray(op.value.data.data)
    type_ = llvm_ir.ArrayType(llvm_ir.IntType(8), len(data))
    variable = llvm_ir.GlobalVariable(module, type_, name=op.sym_name.data)
    variable.linkage = op.linkage.linkage.data
    variable.global_constant = op.constant is not None
    variable.initializer = llvm_ir.Constant(type_, data)
    if op.alignment is not None:
        variable.align = op.alignment.value.data


def _fix_global(op: llvm.GlobalOp, result: llvm_ir.Module) -> None:
    """What `convert_module` leaves out of a global: its alignment, and that it is defined."""
    variable = result.get_global(op.sym_name.data)
    if op.alignment is not None:
        variable.align = op.alignment.value.data
    if op.value is not None and variable.linkage == "external":
        variable.linkage = ""  # a definition: LLVM spells no linkage
    if op.value is None and variable.linkage == "internal":
        variable.initializer = llvm_ir.Constant(variable.value_type, llvm_ir.Undefined)


def _add_noalias(op: llvm.FuncOp, function: llvm_ir.Function) -> None:
    """LLVM's `noalias` on the arguments marked `llvm.noalias`, the one argument
    attribute mlc sets (`convert_to_llvm.distinct_buffers`)."""
    if op.arg_attrs is not None:
        for arg, attrs in zip(function.args, op.arg_attrs.data, strict=True):
            if NOALIAS in attrs.data:
                arg.add_attribute("noalias")


def _add_passthrough(op: llvm.FuncOp, function: llvm_ir.Function) -> None:
    """The function's `passthrough` attributes: a name, or a [key, value] pair written
    as LLVM's string attribute `"key"="value"` (`"prefer-vector-width"="512"`, which
    `convert_to_llvm.vector_width` sets). llvmlite's attribute set accepts only the
    names it knows, so the text goes into the set as is."""
    # A parsed module has it among the attributes, as `no_inline`.
    found = op.passthrough if op.passthrough is not None else op.attributes.get("passthrough")
    entries = found.data if isinstance(found, ArrayAttr) else ()
    for entry in entries:
        if isinstance(entry, StringAttr):
            function.attributes.add(entry.data)
        elif isinstance(entry, ArrayAttr) and len(entry.data) == 2:
            key, value = (item.data for item in entry.data if isinstance(item, StringAttr))
            set.add(function.attributes, f'"{key}"="{value}"')


def _translate(ops: Iterable[Operation], triple: Attribute | None) -> llvm_ir.Module:
    """xDSL's `convert_module` for declarations and globals; bodies via `_convert_body`."""
    declarations = ModuleOp([])
    bodies: list[llvm.FuncOp] = []
    byte_globals: list[llvm.GlobalOp] = []
    for op in ops:
        if _byte_initialised(op):
            assert isinstance(op, llvm.GlobalOp)
            byte_globals.append(op)
        elif isinstance(op, llvm.FuncOp) and op.body.blocks:
            bodies.append(op)
            # A body-less clone declares the function; the body is translated below.
            declarations.body.block.add_op(llvm.FuncOp(op.sym_name, op.function_type, op.linkage))
        else:
            declarations.body.block.add_op(op.clone())
    if triple is not None:
        declarations.attributes["llvm.target_triple"] = triple
    result = convert_module(declarations, fallback_target_triple=host_triple())
    for op in declarations.ops:
        if isinstance(op, llvm.GlobalOp):
            _fix_global(op, result)
    for op in byte_globals:
        _add_byte_global(op, result)
    for op in bodies:
        function = result.get_global(op.sym_name.data)
        assert isinstance(function, llvm_ir.Function)
        function.linkage = op.linkage.linkage.data if op.linkage.linkage.data != "external" else ""
        # A parsed module has it among the attributes: xDSL prints the property there.
        if op.no_inline is not None or "no_inline" in op.attributes:
            function.attributes.add("noinline")
        _add_passthrough(op, function)
        _add_noalias(op, function)
        _convert_body(op, function)
    return result


class LLVMTranslationError(Exception):
    """The module holds something the LLVM IR translation does not handle."""


def host_triple() -> str:
    """The target triple of the machine we run on (what the JIT compiles for)."""
    return llvm_binding.get_default_triple()


def to_llvmlite(module: ModuleOp) -> llvm_ir.Module:
    """The llvmlite module for an `llvm`-dialect module, for the host triple."""
    return ops_to_llvmlite(module.ops, module.attributes.get("llvm.target_triple"))


def ops_to_llvmlite(ops: Iterable[Operation], triple: Attribute | None = None) -> llvm_ir.Module:
    """The llvmlite module for `llvm`-dialect ops, read where they are (a `gpu.module`'s
    kernels need no copy into a module of their own), for `triple` or the host's."""
    try:
        return _translate(ops, triple)
    except (NotImplementedError, LLVMTranslationException, KeyError) as error:
        raise LLVMTranslationError(
            f"cannot translate to LLVM IR: {error} (run convert-to-llvm first?)"
        ) from error


def to_llvm_ir(module: ModuleOp) -> str:
    """The textual LLVM IR of an `llvm`-dialect module."""
    return str(to_llvmlite(module))
