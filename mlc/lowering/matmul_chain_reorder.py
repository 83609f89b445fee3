"""
Re-associate chains of `ml.matmul` into the order that needs the fewest FLOPs.

Matrix products are associative, but their cost is not: with `e: 1000x1`,
`u: 1x1000`, `p: 1000x1`, `(e @ u) @ p` costs 4e6 FLOPs and `e @ (u @ p)` 4e3.
A chain is a maximal tree of `ml.matmul` ops whose inner results have exactly one
use, by the next matmul of the tree, in the same block. Its leaves, in order, fix
the dimensions `d0 x d1, d1 x d2, ..., dn-1 x dn`; the classic matrix-chain
dynamic programme over them gives the optimal association, which the pass builds
when it is strictly cheaper than the current one:

    %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
    %r = ml.matmul %eu, %p : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    // becomes
    %up = ml.matmul %u, %p : (tensor<1x1000xf32>, tensor<1000x1xf32>) -> tensor<1x1xf32>
    %r = ml.matmul %e, %up : (tensor<1000x1xf32>, tensor<1x1xf32>) -> tensor<1000x1xf32>

New ops carry the fused location of the chain's ops. The pass walks every region,
so chains in `scf.for`, `scf.while` and `scf.if` bodies are reordered too; a chain
never crosses a region boundary (that would move work into a loop).

Left alone: chains with a dynamic dimension among the `di` or in a leaf (the best
order could depend on run-time sizes), chains whose operands have batch dimensions
that are not the same static dims on every operand (broadcasting batches change
the cost per product), intermediates with other uses (they must be computed
anyway), and chains already in an optimal order (so the pass is idempotent).

Each chain of three or more leaves gets a remark on its root matmul saying what
was done (`reordered a chain of 3 matmuls: 4004000 -> 8000 flops`) or why not
(`chain not reordered: already optimal (...)`, `... dimension of %x is dynamic`,
`... batch dimensions differ`); an intermediate with several uses gets
`chain stops here: result has N uses`. See `mlc-opt --remarks`.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import FusedLoc, ModuleOp, NoneAttr, TensorType, UnknownLoc
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc import shapes
from mlc.cost_model import matmul_flops
from mlc.diagnostics import op_remark
from mlc.dialects.ml import MatmulOp

# An association of leaves 0..n-1: a leaf index, or the product of two subtrees.
Tree = int | tuple["Tree", "Tree"]


# ---------------------------------------------------------------------------
# Pure helpers: the cost of an association and the optimal one
# ---------------------------------------------------------------------------


def _leaf_span(tree: Tree) -> tuple[int, int]:
    """The first and last leaf index a subtree covers."""
    if isinstance(tree, int):
        return tree, tree
    return _leaf_span(tree[0])[0], _leaf_span(tree[1])[1]


def tree_cost(dims: Sequence[int], tree: Tree) -> int:
    """The FLOPs of evaluating `tree` over matrices `dims[i] x dims[i+1]`."""
    if isinstance(tree, int):
        return 0
    (first, mid), last = _leaf_span(tree[0]), _leaf_span(tree[1])[1]
    product = matmul_flops(dims[first], dims[mid + 1], dims[last + 1])
    return tree_cost(dims, tree[0]) + tree_cost(dims, tree[1]) + product


def optimal_order(dims: Sequence[int]) -> tuple[int, Tree]:
    """
    The minimal FLOPs and an association reaching it, for `len(dims) - 1` matrices.

    The O(n^3) matrix-chain DP; ties go to the leftmost split, so the answer is
    deterministic.
    """
    d = tuple(dims)

    @cache
    def best(i: int, j: int) -> tuple[int, Tree]:
        if i == j:
            return 0, i
        options: list[tuple[int, Tree]] = []
        for k in range(i, j):
            (left_cost, left), (right_cost, right) = best(i, k), best(k + 1, j)
            cost = left_cost + right_cost + matmul_flops(d[i], d[k + 1], d[j + 1])
            options.append((cost, (left, right)))
        return min(options, key=lambda option: option[0])

    return best(0, len(d) - 2)


# ---------------------------------------------------------------------------
# Chains in the IR
# ---------------------------------------------------------------------------


def batch_dims(op: MatmulOp) -> shapes.Shape | None:
    """The batch dims both operands share, if identical and static; else None."""
    a, b = op.a.type, op.b.type
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return None
    batch = a.get_shape()[:-2]
    if batch != b.get_shape()[:-2] or not all(shapes.is_static(x) for x in batch):
        return None
    return batch


def chain_user(op: MatmulOp) -> MatmulOp | None:
    """The matmul whose chain `op` is an inner node of, if any."""
    uses = list(op.result.uses)
    if len(uses) != 1 or not isinstance(user := uses[0].operation, MatmulOp):
        return None
    if user.parent_block() is not op.parent_block():
        return None  # never pull work across a region boundary
    batch = batch_dims(op)
    return user if batch is not None and batch == batch_dims(user) else None


@dataclass
class Chain:
    """The leaves of a chain, its current association, and its ops (root first)."""

    leaves: list[SSAValue]
    tree: Tree
    ops: list[MatmulOp]


def collect_chain(root: MatmulOp) -> Chain:
    """Walk a chain from its root, numbering the leaves left to right."""
    chain = Chain([], 0, [])

    def visit(value: SSAValue, user: MatmulOp) -> Tree:
        owner = value.owner
        if isinstance(owner, MatmulOp) and chain_user(owner) is user:
            return expand(owner)
        chain.leaves.append(value)
        return len(chain.leaves) - 1

    def expand(op: MatmulOp) -> Tree:
        chain.ops.append(op)  # pre-order: every op comes after its user
        return visit(op.a, op), visit(op.b, op)

    chain.tree = expand(root)
    return chain


def chain_dims(leaves: Sequence[SSAValue]) -> list[int] | None:
    """`d0..dn` with leaf i of shape `(..., di, di+1)`, or None if any is dynamic."""
    leaf_shapes = [v.type.get_shape() for v in leaves if isinstance(v.type, TensorType)]
    if len(leaf_shapes) != len(leaves):
        return None
    if not all(shapes.is_static(d) for shape in leaf_shapes for d in shape):
        return None
    return [leaf_shapes[0][-2], *(shape[-1] for shape in leaf_shapes)]


def fused_location(ops: Sequence[Operation]) -> Attribute:
    """One location for ops built from `ops`: theirs, fused when they differ."""
    known: list[Attribute] = []
    for op in ops:
        if not isinstance(op.location, UnknownLoc) and op.location not in known:
            known.append(op.location)
    if not known:
        return UnknownLoc()
    return known[0] if len(known) == 1 else FusedLoc(known, NoneAttr())


# ---------------------------------------------------------------------------
# The rewrite
# ---------------------------------------------------------------------------


def value_name(value: SSAValue) -> str:
    """How a remark names a value: `%name` as written, else by its owner."""
    if value.name_hint:
        return f"%{value.name_hint}"
    owner = value.owner
    return f"the result of '{owner.name}'" if isinstance(owner, Operation) else "a block argument"


def dynamic_leaf(leaves: Sequence[SSAValue]) -> SSAValue | None:
    """The first leaf whose shape is not fully static (or not a tensor), if any."""
    for leaf in leaves:
        leaf_type = leaf.type
        if not isinstance(leaf_type, TensorType) or not all(
            shapes.is_static(d) for d in leaf_type.get_shape()
        ):
            return leaf
    return None


def feeds_matmul(op: MatmulOp) -> bool:
    """Whether some use of `op` is a matmul in the same block (a chain could go on)."""
    return any(
        isinstance(use.operation, MatmulOp) and use.operation.parent_block() is op.parent_block()
        for use in op.result.uses
    )


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


def reorder_chain(root: MatmulOp, rewriter: Rewriter) -> None:
    """Rebuild the chain rooted at `root` in its cheapest association, remarking why (not)."""
    if batch_dims(root) is None:
        if cut_by_batch(root):
            op_remark(root, "chain not reordered: batch dimensions differ")
        return  # not a chain we can price
    chain = collect_chain(root)
    if len(chain.leaves) < 3:
        if cut_by_batch(root):
            op_remark(root, "chain not reordered: batch dimensions differ")
        return  # a single product has one association
    if (leaf := dynamic_leaf(chain.leaves)) is not None:
        op_remark(root, f"chain not reordered: dimension of {value_name(leaf)} is dynamic")
        return  # the best order may depend on run-time sizes
    dims = chain_dims(chain.leaves)
    assert dims is not None
    cost, tree = optimal_order(dims)
    current = tree_cost(dims, chain.tree)
    if cost >= current:
        op_remark(root, f"chain not reordered: already optimal ({current} flops)")
        return  # keep the IR (and the pass idempotent)
    op_remark(
        root, f"reordered a chain of {len(chain.ops)} matmuls: {current} -> {cost} flops"
    )

    location = fused_location(chain.ops)
    new_ops: list[MatmulOp] = []

    def build(node: Tree, result_type: Attribute | None = None) -> SSAValue:
        if isinstance(node, int):
            return chain.leaves[node]
        new = MatmulOp(build(node[0]), build(node[1]), result_type)
        new.location = location
        new_ops.append(new)
        return new.result

    # The root keeps its declared type, which may be less static than inferred.
    new_root = build(tree, root.result.type)
    rewriter.replace_op(root, new_ops, [new_root])
    for dead in chain.ops[1:]:
        rewriter.erase_op(dead)


@dataclass(frozen=True)
class MatmulChainReorderPass(ModulePass):
    """Re-associate `ml.matmul` chains to minimise FLOPs (see the module docstring)."""

    name = "matmul-chain-reorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One sweep over the chains as they stand, so each is considered (and
        # remarked on) exactly once; reordering one chain never changes another's
        # root, only the leaf values it reads.
        matmuls = [m for m in op.walk() if isinstance(m, MatmulOp)]
        for matmul in matmuls:
            if len(uses := list(matmul.result.uses)) > 1 and feeds_matmul(matmul):
                op_remark(matmul, f"chain stops here: result has {len(uses)} uses")
        rewriter = Rewriter()
        for root in [m for m in matmuls if chain_user(m) is None]:
            reorder_chain(root, rewriter)
