"""
Run-time checks that report a value: a `cf.assert` whose message names what failed.

`cf.assert` carries a static message. A check that should name the value it found
(the out-of-range index of a gather) is a `cf.assert` whose condition is an
`arith.cmpi` with that value as its left operand, whose message holds `{}` where the
value goes, and which has the unit attribute `REPORTS_VALUE`:

    %ok = arith.cmpi eq, %worst, %clamped : i64
    cf.assert %ok, "'ml.gather' op index {} is out of range" {mlc.reports_value}

`convert-to-llvm` (`convert_to_llvm/assertions`) then passes the value, as an i64,
with the message to the JIT-bound reporter, which formats it in.
"""

from xdsl.dialects import arith, cf
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Operation, SSAValue

REPORTS_VALUE = "mlc.reports_value"
PLACEHOLDER = "{}"


def assert_reporting(reported: SSAValue, expected: SSAValue, message: str) -> list[Operation]:
    """
    The ops of a check that `reported == expected`, reporting `reported` in `message`
    (which holds `{}`) when it fails: an `arith.cmpi eq` and a `cf.assert`.
    """
    same = arith.CmpiOp(reported, expected, "eq")
    check = cf.AssertOp(same.result, message)
    check.attributes[REPORTS_VALUE] = UnitAttr()
    return [same, check]


def reported_value(op: cf.AssertOp) -> SSAValue | None:
    """The value a failed `op` reports (see the module docstring), or None."""
    if REPORTS_VALUE not in op.attributes:
        return None
    condition: Operation | None = op.arg.owner if isinstance(op.arg.owner, Operation) else None
    if isinstance(condition, arith.CmpiOp):
        return condition.lhs
    return None
