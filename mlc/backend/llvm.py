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
external), `noinline` (xDSL drops it), `llvm.noalias` arguments (xDSL drops argument
attributes), and dense global data: xDSL prints each element as a typed constant, 4.5 s
for a million floats, where the raw bytes as one `c"..."` string take 0.2 s (pointers are
opaque, so the global's LLVM type is free to be a byte array). `EXTRA_OPS` maps an op to
its translation; function bodies are translated by `_convert_body`, which tries those
first and falls back to xDSL's `convert_op`. xDSL has no `llvm.addrspacecast`: an
`llvm.mlir.addressof` typed `!llvm.ptr` of a global in another address space (GPU shared
memory) is translated as that global's generic address, an `addrspacecast`; such a
global with no initial value is defined `undef` (shared memory has none).
"""

from collections.abc import Callable, Iterable

import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import LLVMTranslationException

ValueMap = dict[SSAValue, llvm_ir.Value]
NOALIAS = "llvm.noalias"


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


EXTRA_OPS: dict[type[Operation], Callable[..., bool]] = {
    llvm.FCmpOp: _convert_fcmp,
    llvm.AddressOfOp: _convert_addressof,
}


def _convert_body(op: llvm.FuncOp, function: llvm_ir.Function) -> None:
    """Translate one function body (xDSL's `_convert_func`, with `EXTRA_OPS` first)."""
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
            extra = EXTRA_OPS.get(type(inner))
            if extra is None or not extra(inner, builder, values):
                convert_op(inner, builder, values, blocks)


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
