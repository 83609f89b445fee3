"""
VJP rules of the contractions: matmul (batched, batch dims broadcast).

For `c = a @ b`: `da = dc @ b^T` and `db = a^T @ dc`, each summed over the batch dims
its operand was broadcast along.
"""

from xdsl.ir import Operation, SSAValue

from mlc.autodiff.emitter import Emitter, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml


@vjp_rule(ml.MatmulOp)
def matmul(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.MatmulOp)
    a, b = op.a, op.b
    ga = gb = None
    if needs[0]:
        ga = em.unbroadcast(em(ml.MatmulOp(ct, em.swap_last(b))), shape_of(a))
    if needs[1]:
        gb = em.unbroadcast(em(ml.MatmulOp(em.swap_last(a), ct)), shape_of(b))
    return [ga, gb]
