"""
Tests for `mlc.lowering.graph.shape_inference`: random `ml` programs with their types
widened to `?` are refined, still verify, and every refined type is compatible with
(and at least as static as) the type it replaced.
"""

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from mlc import shapes
from mlc.diagnostics import verify_module
from mlc.ir import parse_module
from mlc.lowering.graph.shape_inference import infer_shapes

UNARY = ("ml.relu", "ml.exp", "ml.neg")
BINARY = ("ml.add", "ml.mul", "ml.max")


def dyn(shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join("?x" for _ in shape) + "f32>"


def static(shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A chain of unary and broadcasting binary ops, with every result type `?`."""
    base = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    lines = [f"func.func @f(%x: {static(base)}) -> {dyn(base)} {{"]
    current = "%x"
    current_type = static(base)
    for i in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(UNARY))
            lines.append(f"  %v{i} = {op} {current} : ({current_type}) -> {dyn(base)}")
        else:
            op = draw(st.sampled_from(BINARY))
            ones = tuple(1 if draw(st.booleans()) else d for d in base)
            lines.append(f"  %c{i} = arith.constant dense<1.0> : {static(ones)}")
            lines.append(
                f"  %v{i} = {op} {current}, %c{i} : ({current_type}, {static(ones)}) -> {dyn(base)}"
            )
        current, current_type = f"%v{i}", dyn(base)
    lines.append(f"  func.return {current} : {current_type}")
    lines.append("}")
    return "\n".join(lines)


@st.composite
def loop_programs(draw: st.DrawFn) -> str:
    """A loop whose body either keeps the carried shape or grows it along dim 0."""
    base = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    arg = dyn(base) if draw(st.booleans()) else static(base)
    grow = draw(st.booleans())
    op = "ml.concat %a, %a {axis = 0 : i64}" if grow else f"{draw(st.sampled_from(UNARY))} %a"
    operand_types = f"{dyn(base)}, {dyn(base)}" if grow else dyn(base)
    return "\n".join(
        [
            f"func.func @f(%x: {arg}, %n: index) -> {dyn(base)} {{",
            f"  %i = ml.relu %x : ({arg}) -> {dyn(base)}",
            "  %lo = arith.constant 0 : index",
            "  %one = arith.constant 1 : index",
            f"  %r = scf.for %k = %lo to %n step %one iter_args(%a = %i) -> ({dyn(base)}) {{",
            f"    %e = {op} : ({operand_types}) -> {dyn(base)}",
            f"    scf.yield %e : {dyn(base)}",
            "  }",
            f"  func.return %r : {dyn(base)}",
            "}",
        ]
    )


def refine_and_check(source: str) -> dict[SSAValue, Attribute]:
    """Refine `source`; check it verifies and every type is compatible with the old one."""
    module = parse_module(source)
    values = [v for op in module.walk() for v in (*op.results, *block_args(op))]
    before = {v: v.type for v in values}
    infer_shapes(module)
    assert verify_module(module) == []
    for value, old in before.items():
        if isinstance(old, TensorType):
            new = value.type
            assert isinstance(new, TensorType)
            assert shapes.compatible(old.get_shape(), new.get_shape())
    return {v: v.type for v in values}


def block_args(op: Operation) -> list[SSAValue]:
    return [a for region in op.regions for block in region.blocks for a in block.args]


@settings(database=None, max_examples=50, deadline=None)
@given(programs())
def test_refined_program_verifies_and_is_compatible(source: str):
    after = refine_and_check(source)
    for t in after.values():
        if isinstance(t, TensorType):  # the argument is static, so is everything derived
            assert all(shapes.is_static(d) for d in t.get_shape())


@settings(database=None, max_examples=50, deadline=None)
@given(loop_programs())
def test_refined_loop_verifies_and_is_compatible(source: str):
    refine_and_check(source)


def test_second_run_changes_nothing():
    source = (
        "func.func @f(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {\n"
        "  %r = ml.relu %x : (tensor<2x3xf32>) -> tensor<?x?xf32>\n"
        "  func.return %r : tensor<?x?xf32>\n"
        "}"
    )
    module = parse_module(source)
    assert infer_shapes(module)
    assert not infer_shapes(module)
