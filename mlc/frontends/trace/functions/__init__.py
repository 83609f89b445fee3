"""
The op functions: what `ops.relu(x)`, `x + y` and `np.exp(x)` record, by family.

Each function takes traced arrays, numpy arrays and Python numbers, and records one or
a few ops through `recording` (promotion, constants, the user's line on shape
errors). They are the bottom of the public API: `mlc.ops` re-exports them under the
names users call, and `TracedArray`'s operators and numpy hooks reach them through
`dispatch`, where each registers under numpy's name as it is defined. The imports
thus run one way, `mlc.ops` -> `functions` -> `recording` -> `array` -> `dispatch`,
`tracer`; importing this package (which `mlc.frontends.trace` does) fills the
dispatch tables.

    elementwise    unary, binary, comparison, where, logical
    math           trigonometric, rounding, isnan/isinf, sign, remainders, bitwise
    reductions     sum, mean, max, min
    scans          argmax, argmin, cumsum
    movement       transpose, reshape, concatenate, take
    indexing       x[...]
    nn             softmax, layer_norm, batch_norm, matmul, conv2d, pooling
    control_flow   cond, while_loop, fori_loop (`scf`)
"""

from mlc.frontends.trace.functions import (
    control_flow,
    elementwise,
    indexing,
    math,
    movement,
    nn,
    reductions,
    scans,
)

__all__ = [
    "control_flow",
    "elementwise",
    "indexing",
    "math",
    "movement",
    "nn",
    "reductions",
    "scans",
]
