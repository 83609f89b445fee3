"""
`autodiff`: reverse-mode differentiation of an `ml` function, into a new function of the
same dialect, which every later pass and both targets then compile as any other.

Given `@f(args...) -> (..., y, ...)`, the pass adds `@f_grad(args...) -> (dy/dargs...)`
for a scalar `y` (seeded with 1), or with `vjp=true`, `@f_vjp(args..., ct) -> (ct *
dy/dargs...)`, a vector-Jacobian product for a `y` of any shape (JAX's `vjp`):

    func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
      %e = ml.exp %x                      %e = ml.exp %x
      %s = ml.reduce_sum %e       ==>     %s = ml.reduce_sum %e
      func.return %s                      %one = arith.constant dense<1.0> : tensor<f32>
    }                                     %b = ml.reshape %one   (the sum's rule)
                                          %g = ml.broadcast_to %b
                                          %d = ml.mul %g, %e     (the exp's rule)
                                          func.return %d

The traversal (`differentiate`) works on the list of ops of one block, so `mlc.grad`
uses it on a function being traced; `scf.if`, `scf.for` and `scf.while` ops in it are
differentiated by `mlc.autodiff.control_flow` (a branch's VJP in an `scf.if` on the same
condition; a loop's states saved by a taping copy, then walked by a reverse loop). It marks the
values that depend on a differentiated argument through floating-point values
(activity analysis; a max subtracted only for stability, as in a softmax written out,
is a constant: `mlc.autodiff.shift_invariance`), walks the ops backwards from the
output, calls each op's VJP rule (`mlc.autodiff.rules`) for the cotangents of its active
operands, and sums the cotangents of values used several times. Every backward op takes
the location of the forward op whose rule built it.

Preconditions: one block; every op on the path from an argument to the output has a
rule, or is an `scf.if`, `scf.for` or `scf.while` whose regions' ops do (a while by its
trip count, recorded first). An op without a rule, a while whose condition region passes
on other values than its state, or an integer value
the output depends on an argument only through (`ml.cmp`, `ml.argmax`, a cast to an
integer type) is an error at that op. The pass leaves the forward ops the gradient does
not use in place: `dce` removes them.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc import shapes
from mlc.autodiff import control_flow, rules, shift_invariance
from mlc.autodiff.emitter import Emitter, element_type
from mlc.autodiff.joint import JointLayout, mark_joint
from mlc.autodiff.rule_table import rule_for
from mlc.diagnostics import op_error
from mlc.dialects.ml.base import is_float

assert rules  # importing the package registers the rules


def is_float_value(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and is_float(element_type(value))


def _nested_operands(op: Operation) -> list[SSAValue]:
    """The operands of `op` and of the ops in its regions (values they read)."""
    if not op.regions:
        return list(op.operands)
    return [v for inner in op.walk() for v in inner.operands]


def activity(
    ops: Sequence[Operation], wrt: Sequence[SSAValue]
) -> tuple[dict[SSAValue, int], dict[SSAValue, int]]:
    """
    For each value, the bit set of the `wrt` values it depends on: through floating-point
    values only (`active`, the dependences a gradient flows along), and through any
    values (`reach`).
    """
    active: dict[SSAValue, int] = {}
    reach: dict[SSAValue, int] = {}
    for i, value in enumerate(wrt):
        active[value] = active.get(value, 0) | 1 << i
        reach[value] = reach.get(value, 0) | 1 << i
    for op in ops:
        operands = _nested_operands(op)
        through_floats = any_reach = 0
        for v in operands:
            any_reach |= reach.get(v, 0)
            if is_float_value(v):
                through_floats |= active.get(v, 0)
        for result in op.results:
            reach[result] = any_reach
            active[result] = through_floats if is_float_value(result) else 0
    return active, reach


def _needed(ops: Sequence[Operation], output: SSAValue) -> set[SSAValue]:
    """The values `output` is computed from (itself included)."""
    needed = {output}
    for op in reversed(ops):
        if any(r in needed for r in op.results):
            needed.update(_nested_operands(op))
    return needed


def _check_integer_paths(
    ops: Sequence[Operation], output: SSAValue, active: dict[SSAValue, int], reach: int
) -> None:
    """An argument the output depends on only through integers: error at that op."""
    lost = reach & ~active.get(output, 0)
    if not lost:
        return
    needed = _needed(ops, output)
    for op in ops:
        if any(r in needed and not is_float_value(r) for r in op.results) and any(
            active.get(v, 0) & lost for v in _nested_operands(op)
        ):
            kind = ", ".join(str(r.type) for r in op.results)
            op_error(
                op,
                f"has no gradient (its result is {kind}), and the value differentiated "
                "depends on the argument only through it",
            )


def differentiate(
    ops: Sequence[Operation],
    wrt: Sequence[SSAValue],
    output: SSAValue,
    seed: SSAValue,
    em: Emitter,
) -> list[SSAValue]:
    """
    The cotangents of `wrt` (each of its value's type) for the cotangent `seed` of
    `output`, built by `em` after `ops` (the forward program, one block's ops). Values not
    defined by `ops` or listed in `wrt` are constants; a `wrt` value the output does
    not depend on gets zeros.
    """
    active, reach = activity(ops, wrt)
    _check_integer_paths(ops, output, active, reach.get(output, 0))
    return backprop(ops, wrt, [(output, seed)], em, active)


def backprop(
    ops: Sequence[Operation],
    wrt: Sequence[SSAValue],
    seeds: Sequence[tuple[SSAValue, SSAValue]],
    em: Emitter,
    active: dict[SSAValue, int] | None = None,
) -> list[SSAValue]:
    """
    The cotangents of `wrt` for the cotangents `seeds` gives values of `ops` (or `wrt`
    themselves), zeros where none reach; what `differentiate` and the control-flow rules
    (for a branch or a loop body) run.
    """
    if active is None:
        active, _ = activity(ops, wrt)
    constant = shift_invariance.invariant_maxima(ops, [value for value, _ in seeds])
    if constant:  # maxima subtracted for stability only: no cotangent flows into them
        active = {**active, **dict.fromkeys(constant, 0)}
    cotangents: dict[SSAValue, SSAValue] = {}
    for value, seed in seeds:
        if active.get(value, 0):
            known = cotangents.get(value)
            cotangents[value] = seed if known is None else em.add(known, seed)
    for op in reversed(ops):
        results = [r for r in op.results if r in cotangents]
        if not results:
            continue
        _pull_back(op, cotangents, active, em)
    grads: list[SSAValue] = []
    for value in wrt:
        if value not in cotangents:
            cotangents[value] = em.zeros_like(value)
        grads.append(cotangents[value])
    return grads


def _pull_back(
    op: Operation,
    cotangents: dict[SSAValue, SSAValue],
    active: dict[SSAValue, int],
    em: Emitter,
) -> None:
    """Add the cotangents `op`'s rule gives its active operands."""
    if isinstance(op, control_flow.CONTROL_FLOW):
        _pull_back_control_flow(op, cotangents, active, em)
        return
    if op.regions:
        op_error(op, "cannot be differentiated: autodiff handles scf.if, scf.for, scf.while only")
    rule = rule_for(op)
    if rule is None:
        op_error(op, "has no differentiation rule")
    if any(r in cotangents for r in op.results[1:]):
        op_error(op, "can be differentiated through its first result only")
    needs = tuple(bool(active.get(v, 0)) for v in op.operands)
    em.location = op.location
    try:
        grads = rule(em, op, cotangents[op.results[0]], needs)
    except shapes.ShapeError as error:
        op_error(op, f"cannot be differentiated: {error}")
    for operand, grad, needed in zip(op.operands, grads, needs, strict=True):
        if grad is None or not needed:
            continue
        known = cotangents.get(operand)
        cotangents[operand] = grad if known is None else em.add(known, grad)


def _pull_back_control_flow(
    op: Operation,
    cotangents: dict[SSAValue, SSAValue],
    active: dict[SSAValue, int],
    em: Emitter,
) -> None:
    em.location = op.location
    try:
        grads = control_flow.pull_back(op, cotangents, active, em, backprop)
    except shapes.ShapeError as error:  # a loop's state to stack has dynamic dims
        op_error(op, f"cannot be differentiated: {error}")
    for value, grad in grads:
        if active.get(value, 0):
            known = cotangents.get(value)
            cotangents[value] = grad if known is None else em.add(known, grad)


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


def _target(module: ModuleOp, name: str) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if not name:
        if len(functions) != 1:
            op_error(module, f"has {len(functions)} functions: name one with function=NAME")
        return functions[0]
    for f in functions:
        if f.sym_name.data == name:
            return f
    op_error(module, f"has no function @{name}")


def _check(f: func.FuncOp, wrt: Sequence[int], result: int, vjp: bool) -> None:
    if not f.body.blocks:
        op_error(f, "has no body to differentiate")
    if len(f.body.blocks) != 1:
        op_error(f, "cannot be differentiated yet: it has several blocks")
    args, outputs = f.function_type.inputs.data, f.function_type.outputs.data
    if not 0 <= result < len(outputs):
        op_error(f, f"has no result #{result} (it has {len(outputs)})")
    out = outputs[result]
    if not isinstance(out, TensorType) or not is_float(element_type(out)):
        op_error(f, f"result #{result} ({out}) is not a floating-point tensor")
    if not vjp and out.get_shape():  # pyright: ignore[reportUnknownMemberType]
        op_error(
            f,
            f"result #{result} ({out}) is not a scalar: use vjp=true, which takes its "
            "cotangent as an extra argument",
        )
    for i in wrt:
        if not 0 <= i < len(args):
            op_error(f, f"has no argument #{i} (it has {len(args)})")
        if wrt.count(i) > 1:
            op_error(f, f"argument #{i} is listed twice in wrt")
        if not isinstance(args[i], TensorType) or not is_float(element_type(args[i])):
            op_error(
                f,
                f"cannot differentiate argument #{i} ({args[i]}): only floating-point "
                "arguments can be",
            )


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Add the gradient (or VJP) function of an `ml` function (see the module docstring)."""

    name = "autodiff"

    function: str = ""
    """The function to differentiate; empty: the module's only function."""

    wrt: tuple[int, ...] = ()
    """The arguments to differentiate by index; empty: every floating-point argument."""

    result: int = 0
    """The result differentiated."""

    vjp: bool = False
    """Take the result's cotangent as a last argument (any shape), instead of a scalar seed 1."""

    with_value: bool = False
    """Return the result first, then the gradients (`value_and_grad`)."""

    grad_function: str = ""
    """The new function's name; empty: `<function>_grad`, or `<function>_vjp` with vjp."""

    def __post_init__(self) -> None:
        if self.result < 0:
            raise ValueError(f"result must be 0 or more, got {self.result}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        forward = _target(op, self.function)
        args = forward.function_type.inputs.data
        wrt = self.wrt or tuple(
            i for i, t in enumerate(args) if isinstance(t, TensorType) and is_float(element_type(t))
        )
        _check(forward, wrt, self.result, self.vjp)
        suffix = "_vjp" if self.vjp else "_grad"
        name = self.grad_function or forward.sym_name.data + suffix
        if any(getattr(o, "sym_name", None) == StringAttr(name) for o in op.ops):
            op_error(forward, f"cannot add @{name}: the module already has a symbol of that name")
        backward = forward.clone()
        backward.sym_name = StringAttr(name)
        Rewriter.insert_op(backward, InsertPoint.after(forward))
        _build(backward, wrt, self.result, self.vjp, self.with_value)


def _build(f: func.FuncOp, wrt: Sequence[int], result: int, vjp: bool, with_value: bool) -> None:
    """Turn `f` (a clone of the forward function) into its gradient function."""
    block = f.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    output = ret.operands[result]
    em = Emitter(InsertPoint.before(ret))
    em.location = output.op.location if isinstance(output, OpResult) else f.location
    if vjp:
        seed = block.insert_arg(output.type, len(block.args))
        seed.name_hint = "cotangent"
        if f.arg_attrs is not None:
            f.arg_attrs = ArrayAttr([*f.arg_attrs.data, DictionaryAttr({})])
    else:
        seed = em.scalar(1.0, output)
    ops = list(block.ops)[:-1]
    grads = differentiate(ops, [block.args[i] for i in wrt], output, seed, em)
    results = [output, *grads] if with_value else grads
    new_return = func.ReturnOp(*results)
    new_return.location = ret.location
    Rewriter.replace_op(ret, new_return)
    f.res_attrs = None
    inputs: list[Attribute] = [a.type for a in block.args]
    f.function_type = FunctionType.from_lists(inputs, [r.type for r in results])
    if vjp:  # forward and backward in one body: `autodiff-partition` can split it
        mark_joint(f, JointLayout(cotangents=1, values=1 if with_value else 0))
