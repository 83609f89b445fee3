"""
Re-associate chains of `ml.matmul` into the order that needs the fewest FLOPs.

Matrix products are associative, but their cost is not: with `e: 1000x1`,
`u: 1x1000`, `p: 1000x1`, `(e @ u) @ p` costs 4e6 FLOPs and `e @ (u @ p)` 4e3.

A chain is a maximal tree of `ml.matmul`, `ml.transpose` of the last two dims and
`ml.mul` by a scalar (a tensor whose dims are all 1, not widening the other
operand), whose inner results have exactly one use, by the next op of the tree, in
the same block. The algebra moves transposes to the leaves (`(A @ B)^T = B^T @ A^T`)
and scalars out (`s * (A @ B) = (s * A) @ B`), so a chain is a scalar times a
product of matrices, some transposed. Its leaves fix the dims `d0 x d1, ...,
dn-1 x dn`; `matmul_chain_order.plan_chain` gives the cheapest association with
the scalars (multiplied together first) applied to the smallest node, and the
pass rebuilds the chain when that is strictly cheaper, or equally cheap with
transposes only on the leaves. A transposed leaf costs nothing: `linalg-fuse-elementwise`
folds a transpose read by a matmul into its indexing map, and the kernel's packing
reads either layout. A transposed product is a copy of it, so `A^T @ B^T` is kept as
it is, never built as `(B @ A)^T`:

    %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
    %r = ml.matmul %eu, %p : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    // becomes
    %up = ml.matmul %u, %p : (tensor<1x1000xf32>, tensor<1000x1xf32>) -> tensor<1x1xf32>
    %r = ml.matmul %e, %up : (tensor<1000x1xf32>, tensor<1x1xf32>) -> tensor<1000x1xf32>

Dynamic dims are symbols (one per set of dims the chain makes equal), and the
order is chosen only where it is the cheapest for every size (`n*m <= n*k*m`);
otherwise the chain is left alone. New ops carry the fused location of the
chain's ops. Chains in `scf.for`, `scf.while` and `scf.if` bodies are reordered
in place; a chain never crosses a region boundary (that would move work into a
loop). Left alone too: operands whose batch dims are not the same static dims
throughout (broadcasting batches change the cost per product), intermediates with
other uses (they must be computed anyway), and chains already optimal (so the
pass is idempotent). Each chain says what was done or why not under `--remarks`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc import shapes
from mlc.cost_model import Dim, Polynomial, elements_cost, matmul_cost
from mlc.diagnostics import op_remark
from mlc.dialects.ml import MatmulOp, MulOp, TransposeOp
from mlc.lowering.graph.matmul_chain_order import (
    Plan,
    Span,
    Tree,
    Undecided,
    leaf_span,
    optimal_order,
    plan_chain,
    tree_cost,
)
from mlc.lowering.support.locations import Located, fused_location

__all__ = ["MatmulChainReorderPass", "Tree", "optimal_order", "tree_cost"]

# ---------------------------------------------------------------------------
# The ops a chain is made of
# ---------------------------------------------------------------------------


def batch_of(value: SSAValue) -> shapes.Shape | None:
    """The batch dims (all but the last two) of a matrix value, if static."""
    t = value.type
    if not isinstance(t, TensorType) or t.get_num_dims() < 2:
        return None
    batch = t.get_shape()[:-2]
    return batch if all(shapes.is_static(d) for d in batch) else None


def swap_perm(rank: int) -> tuple[int, ...]:
    return (*range(rank - 2), rank - 1, rank - 2)


def scalar_factor(op: MulOp) -> tuple[SSAValue, SSAValue] | None:
    """(scalar, matrix) when `op` multiplies a matrix by a tensor of all-1 dims."""
    for scalar, matrix in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        t = scalar.type
        if isinstance(t, TensorType) and all(d == 1 for d in t.get_shape()):
            if matrix.type == op.result.type and batch_of(matrix) is not None:
                return scalar, matrix
    return None


def chain_input(op: Operation) -> Sequence[SSAValue]:
    """The operands through which `op` continues a chain (none if it is not a chain op)."""
    match op:
        case MatmulOp() if batch_of(op.a) is not None and batch_of(op.a) == batch_of(op.b):
            return (op.a, op.b)
        case TransposeOp() if (
            tuple(op.perm.get_values()) == swap_perm(len(op.perm)) and len(op.perm) >= 2
        ):
            return (op.x,)
        case MulOp() if (factor := scalar_factor(op)) is not None:
            return (factor[1],)
        case _:
            return ()


def chain_user(op: Operation) -> Operation | None:
    """The chain op that `op` is an inner node of, if any."""
    if not chain_input(op) or len(op.results) != 1:
        return None
    uses = list(op.results[0].uses)
    if len(uses) != 1 or (user := uses[0].operation).parent_block() is not op.parent_block():
        return None  # several uses, or across a region boundary
    if not any(v is op.results[0] for v in chain_input(user)):
        return None
    return user if batch_of(op.results[0]) == batch_of(user.results[0]) else None


# ---------------------------------------------------------------------------
# Collecting a chain
# ---------------------------------------------------------------------------


@dataclass
class Leaf:
    value: SSAValue
    transposed: bool


@dataclass
class Chain:
    """A chain as written: leaves in product order, scalars, ops (root first)."""

    leaves: list[Leaf] = field(default_factory=list[Leaf])
    scalars: list[SSAValue] = field(default_factory=list[SSAValue])
    ops: list[Operation] = field(default_factory=list[Operation])
    matmuls: list[tuple[Span, int]] = field(default_factory=list[tuple[Span, int]])
    scaled: list[Span] = field(default_factory=list[Span])  # where each scalar applies
    transposes: int = 0
    inner_transposes: int = 0  # of a product or a scaled value, not of a leaf


def collect_chain(root: Operation) -> Chain:
    chain = Chain()

    def visit(value: SSAValue, transposed: bool, user: Operation) -> Span:
        owner = value.owner
        if isinstance(owner, Operation) and chain_user(owner) is user:
            return expand(owner, transposed)
        chain.leaves.append(Leaf(value, transposed))
        return len(chain.leaves) - 1, len(chain.leaves) - 1

    def expand(op: Operation, transposed: bool) -> Span:
        chain.ops.append(op)  # pre-order: every op comes after its user
        match op:
            case MatmulOp():
                first, second = (op.b, op.a) if transposed else (op.a, op.b)
                (start, mid), (_, end) = visit(first, transposed, op), visit(second, transposed, op)
                chain.matmuls.append(((start, end), mid))
                return start, end
            case TransposeOp():
                chain.transposes += 1
                owner = op.x.owner
                if isinstance(owner, Operation) and chain_user(owner) is op:
                    chain.inner_transposes += 1
                return visit(op.x, not transposed, op)
            case _:
                assert isinstance(op, MulOp)
                factor = scalar_factor(op)
                assert factor is not None
                chain.scalars.append(factor[0])
                span = visit(factor[1], transposed, op)
                chain.scaled.append(span)
                return span

    expand(root, False)
    return chain


def chain_dims(leaves: Sequence[Leaf]) -> list[Dim]:
    """
    `d0..dn`, leaf i being `di x di+1`; a dynamic dim is a symbol `d<k>`, shared by
    every position that the chain ties to the same dim of the same value.
    """
    positions: list[list[tuple[SSAValue, int]]] = [[] for _ in range(len(leaves) + 1)]
    for i, leaf in enumerate(leaves):
        rows, cols = (-1, -2) if leaf.transposed else (-2, -1)
        positions[i].append((leaf.value, rows))
        positions[i + 1].append((leaf.value, cols))
    owner: dict[tuple[SSAValue, int], int] = {}
    dims: list[Dim] = []
    for i, slots in enumerate(positions):
        sizes = [ml_shape(value)[axis] for value, axis in slots]
        static = next((s for s in sizes if shapes.is_static(s)), None)
        first = min((owner[s] for s in slots if s in owner), default=i)
        owner.update((s, first) for s in slots)
        dims.append(static if static is not None else dims[first] if first < i else f"d{i}")
    return dims


def ml_shape(value: SSAValue) -> shapes.Shape:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def written_cost(chain: Chain, dims: Sequence[Dim]) -> Polynomial:
    """The cost of the chain as written, priced as `plan_chain` prices plans."""
    cost = Polynomial()
    for (start, end), mid in chain.matmuls:
        cost = cost + matmul_cost(dims[start], dims[mid + 1], dims[end + 1])
    for start, end in chain.scaled:
        cost = cost + elements_cost(dims[start], dims[end + 1])
    return cost


# ---------------------------------------------------------------------------
# Rebuilding
# ---------------------------------------------------------------------------


@dataclass
class Builder:
    """Builds a plan's ops, each at the chain's location."""

    leaves: Sequence[Leaf]
    scalar: SSAValue | None
    emit: Located  # the ops built so far, in order

    def node(self, tree: Tree, plan: Plan) -> SSAValue:
        if isinstance(tree, int):
            leaf = self.leaves[tree]
            value = leaf.value
            if leaf.transposed:
                value = self.emit(TransposeOp(value, swap_perm(len(ml_shape(value)))))
        else:
            value = self.emit(MatmulOp(self.node(tree[0], plan), self.node(tree[1], plan)))
        if self.scalar is not None and plan.scalar_at == leaf_span(tree):
            value = self.emit(MulOp(self.scalar, value))
        return value


def combined_scalar(scalars: Sequence[SSAValue], builder: Builder) -> SSAValue | None:
    if not scalars:
        return None
    value = scalars[0]
    for other in scalars[1:]:
        value = builder.emit(MulOp(value, other))
    return value


def describe(cost: Polynomial) -> str:
    constant = cost.constant()
    return str(constant) if constant is not None else str(cost)


def reorder_chain(root: Operation, rewriter: Rewriter) -> None:
    """Rebuild the chain rooted at `root` in its cheapest form, remarking why (not)."""
    chain = collect_chain(root)
    if not chain.matmuls or (len(chain.leaves) < 3 and not chain.scalars and not chain.transposes):
        if isinstance(root, MatmulOp) and cut_by_batch(root):
            op_remark(root, "chain not reordered: batch dimensions differ")
        return  # nothing to choose
    batch = batch_of(root.results[0])
    if any(batch_of(leaf.value) != batch for leaf in chain.leaves):
        op_remark(root, "chain not reordered: batch dimensions differ")
        return
    leaves = chain.leaves
    dims = chain_dims(leaves)
    try:
        plan = plan_chain(dims, bool(chain.scalars))
    except Undecided:
        symbols = sorted({d for d in dims if isinstance(d, str)})
        dynamic = ", ".join(symbols)
        op_remark(root, f"chain not reordered: the best order depends on dynamic dims ({dynamic})")
        return
    current = written_cost(chain, chain_dims(chain.leaves))
    cost = (
        plan.cost + Polynomial.product(len(chain.scalars) - 1)
        if len(chain.scalars) > 1
        else plan.cost
    )
    if cost == current and not chain.inner_transposes:
        op_remark(root, f"chain not reordered: already optimal ({describe(current)} flops)")
        return  # keep the IR (and the pass idempotent)
    matmuls = len(chain.matmuls)
    plural = "s" if matmuls > 1 else ""
    change = f"{describe(current)} -> {describe(cost)} flops"
    if chain.inner_transposes:
        change += ", transposes moved to the operands"
    op_remark(root, f"reordered a chain of {matmuls} matmul{plural}: {change}")
    builder = Builder(leaves, None, Located(fused_location(chain.ops)))
    builder.scalar = combined_scalar(chain.scalars, builder)
    result = builder.node(plan.tree, plan)
    # The result keeps the root's declared type, which its users were written for
    # and which may be less static than inferred; xDSL has no public setter.
    builder.emit.ops[-1].results[0]._type = root.results[0].type  # pyright: ignore[reportPrivateUsage]
    rewriter.replace_op(root, builder.emit.ops, [result])
    for dead in chain.ops[1:]:
        rewriter.erase_op(dead)


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


def cut_by_batch(op: MatmulOp) -> bool:
    """Whether an operand of `op` would extend its chain but for differing batch dims."""
    for operand in (op.a, op.b):
        owner = operand.owner
        if (
            isinstance(owner, MatmulOp)
            and len(list(owner.result.uses)) == 1
            and owner.parent_block() is op.parent_block()
            and chain_user(owner) is None
        ):
            return True
    return False


def feeds_chain(op: Operation) -> bool:
    """Whether some use of `op` is a chain op in the same block (a chain could go on)."""
    return any(
        any(v is op.results[0] for v in chain_input(use.operation))
        and use.operation.parent_block() is op.parent_block()
        for use in op.results[0].uses
    )


@dataclass(frozen=True)
class MatmulChainReorderPass(ModulePass):
    """Re-associate `ml.matmul` chains to minimise FLOPs (see the module docstring)."""

    name = "matmul-chain-reorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One sweep over the chains as they stand, so each is considered (and
        # remarked on) exactly once; reordering one chain never changes another's
        # root, only the leaf values it reads.
        candidates = [o for o in op.walk() if chain_input(o) or isinstance(o, MatmulOp)]
        for matmul in candidates:
            uses = list(matmul.results[0].uses)
            if isinstance(matmul, MatmulOp) and len(uses) > 1 and feeds_chain(matmul):
                op_remark(matmul, f"chain stops here: result has {len(uses)} uses")
        rewriter = Rewriter()
        for root in [o for o in candidates if chain_user(o) is None]:
            if not chain_input(root):
                if cut_by_batch(root):  # a matmul of operands with differing batch dims
                    op_remark(root, "chain not reordered: batch dimensions differ")
                continue
            reorder_chain(root, rewriter)
