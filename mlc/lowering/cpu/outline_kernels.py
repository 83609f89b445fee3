"""
outline-kernels: each matmul, convolution and depthwise kernel moved into a private
function, one function for each kind of identical kernels, so that `linalg-tile` and
every later pass lower each kind once.

A model repeats its kernels: ResNet-50's 54 convolutions and matmuls are 30 kinds, a
transformer's N blocks are one block's matmuls N times. Runs after `bufferize`, before
`linalg-tile`, on the generics at the top of a function body that `linalg-tile` gives a
kernel of its own (`kernel_choice`: the packed micro-kernel or the matrix-vector nest;
a depthwise convolution). Each becomes a call:

    linalg.generic ins(%x, %w : ...) outs(%y : ...) {...}          // a zero fill of %y before
==>
    func.call @f_kernel3(%x, %w, %y)
    func.func private @f_kernel3(%x, %w, %y) attributes {mlc.kernel} {
      linalg.generic outs(%y) {zero fill}
      linalg.generic ins(%x, %w : ...) outs(%y : ...) {...}
    }

- The zero fill the kernel absorbs (`zero_fill_before`) moves with it, so that the
  kernel still stores its first K block instead of adding it to the fill. A depthwise
  convolution or pooling window takes what it absorbs (`depthwise_loops.absorbed`: its
  padded copy of the image, from the allocation to the free, and its bias broadcast),
  so that `linalg-tile` still finds them beside it, and the frees of the image and bias
  in between wait for the call. So does a convolution that packs its panels from the
  image before its zero padding (`conv_gemm.absorb_padding`).
- Every value the kernel reads from outside is an argument, in order of first use.
  A model's weights (`memref.get_global`) are arguments, so that two layers of one
  shape are one kernel.
- A constant weight that `linalg-tile` packs into B panels at compile time
  (`constant_panels`) is packed here, before outlining, as it would be: its panels'
  global becomes one more argument, and B's argument names it (`mlc.panels`, the
  argument's number), where `linalg-tile` finds it.

The functions are then merged (`function_merging.merge`: equal up to names); each call
keeps the location of the generic it replaces (the callee's ops keep the first copy's),
and `instrument-kernels` times the calls. A kernel no other repeats stays where it is
(`repeated-only`, on by default): outlined, it is lowered once all the same, and its
call costs the caller and `convert-to-llvm` the passing of every memref's descriptor.
Kernels repeat when their outlined functions would be equal (`kernel_key`), which is
found before anything moves, and before any panels are packed. Only top-level generics
move: a kernel inside a loop keeps its panels hoisted before that loop
(`hoisted_panels`), and one in a row block or a loop of the model stays there.
`tile-sizes` and `vector-length` are `linalg-tile`'s, so that the panels packed here are
those it reads.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.cpu.constant_panels import constant_panels, constant_weight, get_panels
from mlc.lowering.cpu.conv_gemm import absorb_padding, conv_of
from mlc.lowering.cpu.depthwise_conv import Depthwise, depthwise_of
from mlc.lowering.cpu.depthwise_loops import absorbed, absorbed_frees
from mlc.lowering.cpu.linalg_tile import PANELS_ATTR, LinalgTilePass, kernel_choice, module_global
from mlc.lowering.linalg.absorbed_padding import frees_between
from mlc.lowering.linalg.contraction import Matmul, matmul_of, zero_fill_before
from mlc.lowering.support.kernel_outlining import (
    insert_after,
    move_into_function,
    ops_key,
    outline_kernels,
    read_from_outside,
)
from mlc.tiling_model import MatmulTiles


@dataclass
class Kernel:
    """The ops a kernel is made of, in order; for a packed matmul, what packs B's panels
    at compile time (`constant_panels`) needs, and whether B is a weight it packs."""

    ops: list[Operation]
    mm: Matmul | None = None
    nr: int = 0
    packs_b: bool = False
    anchor: Operation | None = None
    """Where the call goes (the generic); None: at the last op."""
    frees: tuple[Operation, ...] = ()
    """Frees of buffers the kernel reads, to move after the call."""

    def panels(self) -> memref.GlobalOp | None:
        """B's panels packed now (numpy), if B is a constant weight."""
        return constant_panels(self.mm, self.nr) if self.mm is not None else None


def kernel_of(op: GenericOp, pinned: MatmulTiles | None) -> Kernel | None:
    """What of `op` (and before it) `linalg-tile` would make one kernel of, or None."""
    if (mm := matmul_of(op) or conv_of(op)) is None:
        return None if (dw := depthwise_of(op)) is None else _window_kernel(dw)
    kind, tiles = kernel_choice(mm, pinned)
    if kind == "loops":
        return None
    if kind == "matvec":
        return Kernel([op])
    k = mm.sizes[2]
    fill = zero_fill_before(op, mm.c) if k is not None and k > 0 else None
    ops: list[Operation] = [op] if fill is None else [fill, op]
    if (padded := absorb_padding(op, mm, tiles)) is not None:  # its zero padding goes along
        padding = padded[1]
        order = {o: i for i, o in enumerate(op.parent_block().ops)}  # pyright: ignore[reportOptionalMemberAccess]
        ops = sorted([*ops, *padding.ops], key=order.__getitem__)
        frees = tuple(frees_between(padding.source, padding.ops[0], op))
        return Kernel(ops, mm, tiles.nr, constant_weight(mm) is not None, op, frees)
    return Kernel(ops, mm, tiles.nr, constant_weight(mm) is not None)


def kernel_key(kernel: Kernel) -> tuple[object, ...]:
    """
    Equal for two kernels exactly when their outlined functions would merge: their ops'
    key (`ops_key`) and which value read from outside is B when its panels are passed in.
    """
    values = read_from_outside(kernel.ops)
    b = kernel.mm.b if kernel.mm is not None and kernel.packs_b else None
    return (ops_key(kernel.ops), values.index(b) if b in values else None)


def _window_kernel(dw: Depthwise) -> Kernel:
    """A depthwise convolution or pooling window with the ops it absorbs (module
    docstring), in the order of their block."""
    order = {op: i for i, op in enumerate(dw.op.parent_block().ops)}  # pyright: ignore[reportOptionalMemberAccess]
    ops = sorted([dw.op, *absorbed(dw)], key=order.__getitem__)
    return Kernel(ops, anchor=dw.op, frees=tuple(absorbed_frees(dw)))


def outline(kernel: Kernel, name: str, module: ModuleOp, after: Operation) -> func.FuncOp:
    """Move `kernel` into a new private function `name`, placed after `after` (a
    function of `module`), and call it in its place."""
    last = kernel.anchor or kernel.ops[-1]
    values = read_from_outside(kernel.ops)
    caller_point = InsertPoint.before(last)
    arg_attrs: list[DictionaryAttr] = [DictionaryAttr({}) for _ in values]
    packed = kernel.panels() if kernel.packs_b else None
    if packed is not None and kernel.mm is not None and kernel.mm.b in values:
        global_ = module_global(last, packed)
        assert global_ is not None
        panels = get_panels(global_)
        panels.location = last.location
        Rewriter.insert_op(panels, caller_point)
        arg_attrs[values.index(kernel.mm.b)] = DictionaryAttr(
            {PANELS_ATTR: IntegerAttr(len(values), i64)}
        )
        values.append(panels.results[0])
        arg_attrs.append(DictionaryAttr({}))
    function = move_into_function(kernel.ops, values, name, last, arg_attrs, kernel.frees)
    return insert_after(module, function, after)


def kernels(function: func.FuncOp, pinned: MatmulTiles | None) -> list[Kernel]:
    """The kernels at the top of `function`'s blocks, in order."""
    found = (
        kernel_of(g, pinned)
        for b in function.body.blocks
        for g in b.ops
        if isinstance(g, GenericOp)
    )
    return [kernel for kernel in found if kernel is not None]


@dataclass(frozen=True)
class OutlineKernelsPass(ModulePass):
    """Outline each kernel into a function and merge identical ones (module docstring)."""

    name = "outline-kernels"

    tile_sizes: tuple[int, ...] = ()
    """`linalg-tile`'s MR, NR, KC, MC; empty: the host model's choice."""

    vector_length: int = 0
    """`linalg-tile`'s elements per vector; 0: the host's widest vector."""

    repeated_only: bool = True
    """Outline only kernels that another kernel repeats; off: every kernel."""

    def __post_init__(self) -> None:
        self.tiles()  # a bad option is a one-line error when the pipeline is built

    def tiles(self) -> MatmulTiles | None:
        return LinalgTilePass(self.tile_sizes, self.vector_length).tiles()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pinned = self.tiles()
        outline_kernels(
            op,
            lambda generic: kernel_of(generic, pinned),
            kernel_key,
            lambda kernel, name, after: outline(kernel, name, op, after),
            self.repeated_only,
        )
