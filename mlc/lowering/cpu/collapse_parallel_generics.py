"""
`collapse-parallel-generics`: an elementwise `linalg.generic` over contiguous buffers
runs as one flat loop.

An all-parallel generic whose operands are all read and written at the loop point
(identity maps) or are scalars (rank 0) does not care about its buffers' shape when
they are contiguous. Left as a nest, a short inner loop (the 10 columns of a 1024x10
parameter's SGD update) is unrolled fully by LLVM, which then vectorises the loop over
rows at a stride of 10 with `masked.gather`s and scatters; one loop over all the
elements gives it plain vector loads and stores:

    linalg.generic {maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (), (d0, d1) -> (d0, d1)]}
        ins(%p, %lr : memref<1024x10xf32>, memref<f32>) outs(%q : memref<1024x10xf32>)
==>
    %pf = memref.collapse_shape %p [[0, 1]] : memref<1024x10xf32> into memref<10240xf32>
    %qf = memref.collapse_shape %q [[0, 1]] : memref<1024x10xf32> into memref<10240xf32>
    linalg.generic {maps = [(d0) -> (d0), (d0) -> (), (d0) -> (d0)]}
        ins(%pf, %lr : memref<10240xf32>, memref<f32>) outs(%qf : memref<10240xf32>)

Only a generic whose innermost loop is shorter than `SHORT` collapses: a longer one
vectorises as it is, and keeps its outer loop, along which `linalg-tile` runs the
generics of one row extent in one parallel loop (the updates of a 1024x1024 and a 1024
parameter, for one). Only static shapes with the identity layout collapse (a strided
view is not one run of memory), only generics with an input (a fill is left for the
kernels that absorb it as their accumulator's start) and bodies that do not read
`linalg.index`. The flat generic then goes through `linalg-tile` like any other:
blocks of the one loop per thread.
"""

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

# Elements in an innermost loop that LLVM unrolls rather than vectorises along: one
# 512-bit vector of f32.
SHORT = 16


def _collapsible(op: GenericOp) -> bool:
    rank = len(op.iterator_types)
    if rank < 2 or not op.inputs or op.res:
        return False
    if any(str(t.data) != "parallel" for t in op.iterator_types):
        return False
    identity = AffineMap.identity(rank)
    for value, attr in zip(op.operands, op.indexing_maps, strict=True):
        kind = value.type
        if not isinstance(kind, MemRefType):
            return False
        affine_map = attr.data
        if not affine_map.results and kind.get_num_dims() == 0:
            continue
        if affine_map != identity or not isinstance(kind.layout, NoneAttr):
            return False
        if not kind.has_static_shape() or kind.get_shape()[-1] >= SHORT:
            return False
    return not any(isinstance(inner, IndexOp) for inner in op.body.walk())


def _flat(rewriter: Rewriter, op: GenericOp, value: SSAValue, rank: int) -> SSAValue:
    kind = value.type
    assert isinstance(kind, MemRefType)
    if kind.get_num_dims() == 0:
        return value
    flat_type = MemRefType(kind.element_type, [prod(kind.get_shape())])
    reassociation = ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in range(rank)])])
    collapse = memref.CollapseShapeOp.build(
        operands=[value],
        result_types=[flat_type],
        properties={"reassociation": reassociation},
    )
    rewriter.insert_op(collapse, InsertPoint.before(op))
    return collapse.result


def collapse_generic(op: GenericOp) -> None:
    """Rewrite `op` (which `_collapsible` accepted) as a generic over one loop."""
    rank = len(op.iterator_types)
    rewriter = Rewriter()
    flat = [_flat(rewriter, op, value, rank) for value in op.operands]
    one, scalar = AffineMap.identity(1), AffineMap(1, 0, ())
    maps = [AffineMapAttr(scalar if not attr.data.results else one) for attr in op.indexing_maps]
    n_in = len(op.inputs)
    replacement = GenericOp(
        flat[:n_in],
        flat[n_in:],
        op.detach_region(op.body),
        maps,
        [IteratorTypeAttr.parallel()],
        [],
        op.doc,
        op.library_call,
    )
    rewriter.replace_op(op, replacement)


def collapse_parallel_generics(module: ModuleOp) -> int:
    """Collapse every collapsible generic of `module`; how many were."""
    found = [op for op in module.walk() if isinstance(op, GenericOp) and _collapsible(op)]
    for op in found:
        collapse_generic(op)
    return len(found)


@dataclass(frozen=True)
class CollapseParallelGenericsPass(ModulePass):
    """Elementwise generics over contiguous buffers as one flat loop (module docstring)."""

    name = "collapse-parallel-generics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        collapse_parallel_generics(op)
