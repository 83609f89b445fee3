"""
Tests for `licm`: the helpers (trip counts, the cost rule, byte formatting) and the
pass on random loop nests, checked to keep the program valid, move ops without
adding or losing any, explain every invariant op it leaves behind, and be idempotent.
"""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp

from mlc.diagnostics import capture, verify_module
from mlc.ir import parse_module, print_module
from mlc.lowering.graph.licm import (
    LoopInvariantCodeMotionPass,
    format_bytes,
    hoisting_cost,
    invariant_ops,
    loop_regions,
    may_run_zero_times,
)
from mlc.registry import make_context


def for_loops(bounds: str) -> list[scf.ForOp]:
    """A loop with the constant bounds `lb ub step`, then one up to an argument."""
    lb, ub, step = bounds.split()
    text = f"""
    func.func @f(%n: index) {{
      %lb = arith.constant {lb} : index
      %ub = arith.constant {ub} : index
      %step = arith.constant {step} : index
      scf.for %i = %lb to %ub step %step {{
      }}
      scf.for %i = %lb to %n step %step {{
      }}
      func.return
    }}
    """
    return [op for op in parse_module(text).walk() if isinstance(op, scf.ForOp)]


def test_may_run_zero_times_for():
    runs, dynamic = for_loops("0 8 1")
    assert not may_run_zero_times(runs, runs.body)
    assert may_run_zero_times(dynamic, dynamic.body)
    for bounds in ("4 4 1", "0 8 -1"):
        never, _ = for_loops(bounds)
        assert may_run_zero_times(never, never.body)


def test_may_run_zero_times_while():
    text = """
    func.func @f(%c: i1) {
      scf.while () : () -> () {
        scf.condition(%c)
      } do {
        scf.yield
      }
      func.return
    }
    """
    loop = next(op for op in parse_module(text).walk() if isinstance(op, scf.WhileOp))
    assert not may_run_zero_times(loop, loop.before_region)
    assert may_run_zero_times(loop, loop.after_region)


def test_hoisting_cost():
    text = """
    func.func @f(%e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>, %d: tensor<?x1000xf32>) {
      %big = arith.constant dense<1.0> : tensor<1000x1000xf32>
      %outer = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
      %dyn = ml.exp %d : (tensor<?x1000xf32>) -> tensor<?x1000xf32>
      %s = arith.constant 3 : index
      func.return
    }
    """
    module = parse_module(text)
    big, outer, dyn, scalar = [op for op in module.walk() if op.parent_op() is not module][1:5]
    assert hoisting_cost(outer, 1_000_000) == 4_000_000  # 2e6 FLOPs < 4e6 bytes
    assert hoisting_cost(outer, 4_000_000) is None  # within the limit
    assert hoisting_cost(big, 0) is None  # constants always move
    assert hoisting_cost(dyn, 0) is None  # unknown size
    assert hoisting_cost(scalar, 0) is None  # no tensor result


def test_format_bytes():
    assert format_bytes(12) == "12 bytes"
    assert format_bytes(4_000_000) == "4.0 MB"
    assert format_bytes(268_435_456) == "268.4 MB"
    assert format_bytes(1500) == "1.5 KB"
    assert format_bytes(3 * 10**12) == "3000.0 GB"


# ---------------------------------------------------------------------------
# Random loop nests
# ---------------------------------------------------------------------------

T = "tensor<4xi32>"
OPS = ("add", "sub", "mul", "max", "div")  # integer ml.div is not speculatable


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A function with one or two nested scf.for loops over a random op DAG."""
    nested = draw(st.booleans())
    outer_ub = draw(st.sampled_from(["%c8", "%n"]))
    inner_ub = draw(st.sampled_from(["%c8", "%n"]))
    values = ["%a", "%b", "%x", *(["%y"] if nested else [])]
    body: list[str] = []
    for k in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(OPS))
        lhs, rhs = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        body.append(f"%v{k} = ml.{op} {lhs}, {rhs} : ({T}, {T}) -> {T}")
        values.append(f"%v{k}")
    carried = values[-1]
    lines = [
        f"func.func @f(%a: {T}, %b: {T}, %n: index) -> {T} {{",
        "%c0 = arith.constant 0 : index",
        "%c1 = arith.constant 1 : index",
        "%c8 = arith.constant 8 : index",
        f"%r = scf.for %i = %c0 to {outer_ub} step %c1 iter_args(%x = %a) -> ({T}) {{",
    ]
    if nested:
        lines.append(f"%s = scf.for %j = %c0 to {inner_ub} step %c1 iter_args(%y = %x) -> ({T}) {{")
        lines += [*body, f"scf.yield {carried} : {T}", "}", f"scf.yield %s : {T}", "}"]
    else:
        lines += [*body, f"scf.yield {carried} : {T}", "}"]
    lines += [f"func.return %r : {T}", "}"]
    return "\n".join(lines)


def run_licm(module: ModuleOp) -> list[str]:
    with capture() as remarks:
        LoopInvariantCodeMotionPass().apply(make_context(), module)
    return [r.message for r in remarks]


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_loops(text: str):
    module = parse_module(text)
    before = op_counts(module)
    remarks = run_licm(module)
    assert verify_module(module) == []
    assert op_counts(module) == before
    # Every invariant op left in a loop was explained by a remark.
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    left = [op for loop in loops for r in loop_regions(loop) for op in invariant_ops(loop, r)]
    assert len(left) <= sum("op not hoisted: " in m for m in remarks)
    # What stays is an integer division that might not run, or depends on one.
    assert all(op.name == "ml.div" or any(v.owner in left for v in op.operands) for op in left)
    printed = print_module(module)
    run_licm(module)
    assert print_module(module) == printed
