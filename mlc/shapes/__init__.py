"""
Shape functions: the result shape of every `ml` op, computed from operand shapes.

This package is the one place where mlc's shape rules live. The `ml` verifiers, the
type inference of op builders, the frontends and the `shape-inference` pass all call
these functions, so a rule is written once and checked everywhere. Callers import the
package (`from mlc import shapes`, `shapes.broadcast(...)`); the modules split it by
op family:

    dims          `DYNAMIC`, `ShapeError`, printing, axis normalisation
    broadcasting  numpy broadcasting (elementwise ops, broadcast_to)
    movement      transpose, reshape, concat, slice, gather
    indexing      gather_elements, gather_nd, top_k, scatter_elements, scatter_nd
    reduction     reductions, softmax, layer_norm, batch_norm
    attention     fused attention (grouped K/V heads, a broadcast mask)
    nn            matmul, convolutions, pools
    refinement    agreement of declared and inferred shapes; refining, joining, unifying
    equalities    which dims an op's rule makes equal (for `shape-inference`)

A shape is a tuple of ints; a dynamic dimension is `DYNAMIC` (xDSL's
`DYNAMIC_INDEX`, the value MLIR prints as `?`). The functions never guess: a dynamic
dimension stays dynamic unless the rule pins it (a dynamic dimension broadcast
against a static `N > 1` must be `N`, a matmul inner dimension against a static one
is that one). A statically provable violation raises `ShapeError` with a message
that names the dimensions involved, in the style of MLIR's verifiers.
"""

from mlc.shapes.attention import attention, attention_heads
from mlc.shapes.broadcasting import broadcast, broadcast_dims, broadcast_to
from mlc.shapes.dims import (
    DYNAMIC,
    Shape,
    ShapeError,
    format_dim,
    format_shape,
    is_static,
    join_dims,
    normalize_axes,
    normalize_axis,
    num_elements,
)
from mlc.shapes.equalities import (
    RESULT,
    DimRef,
    Equality,
    batch_norm_equalities,
    broadcast_equalities,
    broadcast_to_equalities,
    concat_equalities,
    conv_equalities,
    gather_equalities,
    identity_equalities,
    layer_norm_equalities,
    matmul_equalities,
    pool_equalities,
    reduce_equalities,
    transpose_equalities,
)
from mlc.shapes.indexing import gather_elements, gather_nd, scatter_elements, scatter_nd, top_k
from mlc.shapes.movement import (
    check_permutation,
    concat,
    gather,
    reshape,
    slice_,
    slice_dim,
    transpose,
)
from mlc.shapes.nn import SPATIAL_NAMES, check_window_attrs, conv, matmul, pool, window_output
from mlc.shapes.reduction import arg_reduce, batch_norm, layer_norm, reduce, scan, softmax
from mlc.shapes.refinement import DimUnifier, compatible, join, refine

__all__ = [
    "DYNAMIC",
    "RESULT",
    "SPATIAL_NAMES",
    "DimRef",
    "DimUnifier",
    "Equality",
    "Shape",
    "ShapeError",
    "arg_reduce",
    "attention",
    "attention_heads",
    "batch_norm",
    "batch_norm_equalities",
    "broadcast",
    "broadcast_dims",
    "broadcast_equalities",
    "broadcast_to",
    "broadcast_to_equalities",
    "check_permutation",
    "check_window_attrs",
    "compatible",
    "concat",
    "concat_equalities",
    "conv",
    "conv_equalities",
    "format_dim",
    "format_shape",
    "gather",
    "gather_elements",
    "gather_equalities",
    "gather_nd",
    "identity_equalities",
    "is_static",
    "join",
    "join_dims",
    "layer_norm",
    "layer_norm_equalities",
    "matmul",
    "matmul_equalities",
    "normalize_axes",
    "normalize_axis",
    "num_elements",
    "pool",
    "pool_equalities",
    "reduce",
    "reduce_equalities",
    "refine",
    "reshape",
    "scan",
    "scatter_elements",
    "scatter_nd",
    "slice_",
    "slice_dim",
    "softmax",
    "top_k",
    "transpose",
    "transpose_equalities",
    "window_output",
]
