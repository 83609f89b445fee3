"""
`autodiff-partition`: split a joint forward/backward function into a forward function
that returns its values and the residuals the backward keeps, and a backward function
that takes those residuals and the cotangents and returns the gradients (AOT autograd's
partition, with functorch's min-cut choice of what to save; `mlc.autodiff.min_cut`).

    func.func @f_vjp(%x, %ct) -> (%y, %dx)          func.func @f_vjp_forward(%x) -> (%y, %r...)
        attributes {ml.joint = {...}}        ==>    func.func @f_vjp_backward(%r..., %ct) -> %dx

The joint function is one marked by `ml.joint` (`mlc.autodiff.joint`: `autodiff{vjp=true}`
and `mlc.vjp` build them); it is replaced by the two. The backward recomputes the cheap
forward values it reads (elementwise ops, data movement) from the saved ones where that
saves bytes, and never recomputes a matmul, a convolution, a large reduction, a loop or
an op with side effects; what it recomputes costs at most `max-recompute` times the
forward's FLOPs (default 1: the forward once more, at most). With `--remarks`, each
saved value, each recomputed op, each op the cap refused and the function say what was
chosen and what it costs in bytes.

Preconditions: one block; the forward's values do not depend on a cotangent. A value the
backward needs that is neither a tensor (to save) nor recomputable is an error.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc import cost_model
from mlc.autodiff.joint import JOINT_ATTR, is_joint, joint_layout
from mlc.autodiff.min_cut import DEFAULT_MAX_RECOMPUTE, Cut, Unsplittable, backward_ops, min_cut
from mlc.diagnostics import op_error, op_remark


@dataclass(frozen=True)
class SplitNames:
    forward: str
    backward: str


def _describe(value: SSAValue) -> str:
    size = cost_model.residual_bytes(value)
    return f"{value.type} ({'not a tensor' if size is None else f'{size} bytes'})"


def _remark(f: func.FuncOp, cut: Cut, names: SplitNames) -> None:
    """Say what was saved, what is recomputed and why, in bytes."""
    for i, value in enumerate(cut.saved):
        owner = value.owner
        if isinstance(owner, Block):
            op_remark(f, f"saves argument #{value.index} for the backward: {_describe(value)}")
            continue
        assert isinstance(owner, Operation)
        refusal = cut.refusals.get(owner)
        why = refusal if refusal is not None else "cheaper than recomputing it from saved values"
        op_remark(owner, f"saved for the backward as residual #{i}: {_describe(value)}: {why}")
    saved = set(cut.saved)
    for op, why in cut.capped.items():
        if not any(r in saved for r in op.results):  # else its residual remark says why
            op_remark(op, f"not recomputed in the backward: {why}")
    for op in cut.recomputed:
        if not op.operands:
            continue  # a constant: nothing to say
        kept = " + ".join(_describe(r) for r in op.results) or "nothing"
        op_remark(op, f"recomputed in the backward instead of saving {kept}")
    op_remark(
        f,
        f"split into @{names.forward} and @{names.backward}: saves {len(cut.saved)} values "
        f"({cut.saved_bytes} bytes), recomputes {len(cut.recomputed)} ops; saving the "
        f"{len(cut.read)} forward values the backward reads would keep {cut.read_bytes} bytes",
    )


def _function(
    name: str,
    location: object,
    inputs: Sequence[SSAValue],
    ops: Sequence[Operation],
    outputs: Sequence[SSAValue],
    ret: func.ReturnOp,
) -> func.FuncOp:
    """A function of clones of `ops`, from `inputs` (as arguments) to `outputs`."""
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip(inputs, block.args, strict=True):
        new.name_hint = old.name_hint
        mapping[old] = new
    for op in ops:
        block.add_op(op.clone(value_mapper=mapping))
    results = [mapping.get(v, v) for v in outputs]
    new_ret = func.ReturnOp(*results)
    new_ret.location = ret.location
    block.add_op(new_ret)
    type_ = FunctionType.from_lists([a.type for a in block.args], [r.type for r in results])
    f = func.FuncOp(name, type_, Region(block))
    f.location = location  # pyright: ignore[reportAttributeAccessIssue]
    return f


def split(
    f: func.FuncOp, names: SplitNames, max_recompute: float = DEFAULT_MAX_RECOMPUTE
) -> tuple[func.FuncOp, func.FuncOp, Cut]:
    """The forward and backward functions of the joint `f`, and the cut that made them
    (recomputing at most `max_recompute` times the forward's FLOPs)."""
    layout = joint_layout(f)
    if len(f.body.blocks) != 1:
        op_error(f, "cannot be split: it has several blocks")
    block = f.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        op_error(f, "cannot be split: its body does not end with func.return")
    first_ct = len(block.args) - layout.cotangents
    primals, cotangents = list(block.args[:first_ct]), list(block.args[first_ct:])
    values, grads = list(ret.operands[: layout.values]), list(ret.operands[layout.values :])
    ops = list(block.ops)[:-1]
    backward = backward_ops(ops, cotangents)
    for i, v in enumerate(values):
        if v in cotangents or v.owner in backward:
            op_error(f, f"cannot be split: value #{i} depends on a cotangent")
    try:
        cut = min_cut(ops, primals, cotangents, values, grads, max_recompute)
    except Unsplittable as error:
        where = error.value.owner
        op_error(
            where if isinstance(where, Operation) else f,
            f"cannot be split: the backward needs a value of type {error.value.type}, "
            "which is neither a tensor to save nor recomputable",
        )
    _remark(f, cut, names)
    forward = _function(names.forward, f.location, primals, cut.forward, [*values, *cut.saved], ret)
    backward_f = _function(
        names.backward, f.location, [*cut.saved, *cotangents], cut.backward, grads, ret
    )
    return forward, backward_f, cut


@dataclass(frozen=True)
class AutodiffPartitionPass(ModulePass):
    """Split joint forward/backward functions, saving the min-cut set of activations."""

    name = "autodiff-partition"

    function: str = ""
    """The joint function to split; empty: every function marked `ml.joint`."""

    forward_function: str = ""
    """The forward's name; empty: `<function>_forward`."""

    backward_function: str = ""
    """The backward's name; empty: `<function>_backward`."""

    max_recompute: float = DEFAULT_MAX_RECOMPUTE
    """The most the backward recomputes, as a fraction of the forward's FLOPs."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.max_recompute >= 0:
            op_error(op, f"max-recompute must be >= 0, got {self.max_recompute}")
        functions = [f for f in op.ops if isinstance(f, func.FuncOp)]
        if self.function:
            chosen = [f for f in functions if f.sym_name.data == self.function]
            if not chosen:
                op_error(op, f"has no function @{self.function}")
        else:
            chosen = [f for f in functions if is_joint(f)]
            if not chosen:
                op_error(op, f"has no function marked {JOINT_ATTR} to split")
        if len(chosen) > 1 and (self.forward_function or self.backward_function):
            op_error(op, "has several joint functions: name one with function=NAME")
        taken = {f.sym_name.data for f in functions}
        for joint in chosen:
            name = joint.sym_name.data
            names = SplitNames(
                self.forward_function or f"{name}_forward",
                self.backward_function or f"{name}_backward",
            )
            for new in (names.forward, names.backward):
                if new in taken:
                    op_error(
                        joint, f"cannot add @{new}: the module already has a symbol of that name"
                    )
            forward, backward, _ = split(joint, names, self.max_recompute)
            Rewriter.insert_op([forward, backward], InsertPoint.after(joint))
            Rewriter.erase_op(joint)
            taken.update((names.forward, names.backward))
