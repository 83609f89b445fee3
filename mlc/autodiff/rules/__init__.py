"""
The VJP rules, one module per op family; importing this package registers them all in
`mlc.autodiff.rule_table.RULES`.

    elementwise   arithmetic, activations, select, cast
    contractions  matmul
    movement      transpose, reshape, broadcast_to, concat, slice, gather
    reductions    reduce_sum/mean/max/min, softmax, layer_norm
"""

from mlc.autodiff.rules import contractions, elementwise, movement, reductions

__all__ = ["contractions", "elementwise", "movement", "reductions"]
