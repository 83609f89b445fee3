"""
The VJP rules, one module per op family; importing this package registers them all in
`mlc.autodiff.rule_table.RULES`.

    elementwise   arithmetic, activations, select, cast
    math          trigonometric and hyperbolic functions, rem, rounding (zero)
    contractions  matmul
    windows       conv1d/2d/3d, max and average pooling
    movement      transpose, reshape, broadcast_to, concat, slice
    indexing      gather (a scatter-add), gather_elements/nd, scatters, top_k, cumsum
    reductions    reduce_sum/mean/max/min, softmax, layer_norm, batch_norm
"""

from mlc.autodiff.rules import (
    contractions,
    elementwise,
    indexing,
    math,
    movement,
    reductions,
    windows,
)

__all__ = ["contractions", "elementwise", "indexing", "math", "movement", "reductions", "windows"]
