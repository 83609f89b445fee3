"""
ONNX Einsum as transposes, reshapes, `ml.matmul` and `ml.reduce_sum`.

The equation is parsed into one list of labels per operand and the output's (`...`
becomes one label per dim it covers, right-aligned; without `->` the output is the
labels seen once, in order, after the ellipsis). Then:

- a label repeated within an operand (`ii->i`, a trace) takes the diagonal: the
  operand times an identity mask (static sizes), summed over the second occurrence;
- a label that neither the output nor a later operand needs is summed away;
- operands contract left to right, two at a time, as one batched matmul: the shared
  labels the result keeps are the batch, the other shared ones the contraction, and
  each side's own labels its rows or columns (`bhid,bhjd->bhij` is `q @ k^T` over
  (b, h); `i,j->ij` an outer product with a contraction of size 1);
- a transpose puts the labels in the output's order.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import dtype, product, reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.table import converts

Labels = list[str]
# Labels standing for the dims an ellipsis covers: outside ASCII, so never a letter.
ELLIPSIS_BASE = 0x100


def parse(equation: str, ranks: Sequence[int]) -> tuple[list[Labels], Labels]:
    """The labels of each operand and of the output."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise NodeError(f"the equation '{equation}' names {len(terms)} operands, got {len(ranks)}")
    # The dims each ellipsis covers, then the labels right-aligned to the longest.
    ellipsis_rank = max(
        _expand(term, rank, equation, 0)[1] for term, rank in zip(terms, ranks, strict=True)
    )
    operands = [
        _expand(t, r, equation, ellipsis_rank)[0] for t, r in zip(terms, ranks, strict=True)
    ]
    if arrow:
        output, _ = _expand(rhs, None, equation, ellipsis_rank)
    else:
        seen = [label for labels in operands for label in labels]
        dots = [chr(ELLIPSIS_BASE + i) for i in range(ellipsis_rank)]
        output = dots + sorted(
            label for label in set(seen) if seen.count(label) == 1 and label not in dots
        )
    for label in output:
        if not any(label in labels for labels in operands):
            raise NodeError(f"the output label '{label}' of '{equation}' is on no operand")
    return operands, output


def _expand(term: str, rank: int | None, equation: str, longest: int) -> tuple[Labels, int]:
    """
    The labels of one term, its ellipsis expanded and right-aligned to the `longest`
    ellipsis (an input's covers its rank's spare dims, the output's the longest); and
    how many dims the ellipsis covers.
    """
    if not all(c.isalpha() or c == "." for c in term) or term.count("...") > 1:
        raise NodeError(f"cannot parse the einsum term '{term}' of '{equation}'")
    head, dots, tail = term.partition("...")
    if not dots:
        if rank is not None and len(term) != rank:
            raise NodeError(
                f"the term '{term}' of '{equation}' has {len(term)} labels, rank {rank}"
            )
        return list(term), 0
    covered = longest if rank is None else rank - len(head) - len(tail)
    if covered < 0:
        raise NodeError(f"the term '{term}' of '{equation}' has more labels than rank {rank}")
    # Right-aligned, so that a shorter ellipsis broadcasts against a longer one.
    first = max(longest - covered, 0)
    labels = [chr(ELLIPSIS_BASE + first + i) for i in range(covered)]
    return [*head, *labels, *tail], covered


def _diagonal(node: Node, x: SSAValue, labels: Labels) -> tuple[SSAValue, Labels]:
    """Take the diagonal over every label `labels` holds twice."""
    labels = list(labels)
    while repeated := [label for label in labels if labels.count(label) > 1]:
        first = labels.index(repeated[0])
        second = labels.index(repeated[0], first + 1)
        n, m = shape_of(x)[first], shape_of(x)[second]
        if n < 0 or m < 0 or n != m:
            raise NodeError(f"a repeated einsum label needs equal static sizes, got {n} and {m}")
        mask_shape = [n if d in (first, second) else 1 for d in range(len(labels))]
        mask = np.eye(n, dtype=dtype(x)).reshape(mask_shape)
        x = node.emit(ml.MulOp(x, node.constant(mask)))
        x = node.emit(ml.ReduceSumOp(x, [second], keepdims=False))
        del labels[second]
    return x, labels


def _sum_away(node: Node, x: SSAValue, labels: Labels, needed: set[str]) -> tuple[SSAValue, Labels]:
    axes = [d for d, label in enumerate(labels) if label not in needed]
    if not axes:
        return x, labels
    return node.emit(ml.ReduceSumOp(x, axes, keepdims=False)), [
        label for label in labels if label in needed
    ]


def _arranged(node: Node, x: SSAValue, labels: Labels, order: Labels) -> SSAValue:
    perm = [labels.index(label) for label in order]
    if perm == list(range(len(perm))):
        return x
    return node.emit(ml.TransposeOp(x, perm))


def _contract(
    node: Node, a: tuple[SSAValue, Labels], b: tuple[SSAValue, Labels], keep: set[str]
) -> tuple[SSAValue, Labels]:
    """Two operands as one batched matmul; the result keeps the labels in `keep`."""
    (x, la), (y, lb) = a, b
    batch = [label for label in la if label in lb and label in keep]
    inner = [label for label in la if label in lb and label not in keep]
    rows = [label for label in la if label not in lb]
    cols = [label for label in lb if label not in la]
    xs = dict(zip(la, sizes(node, x), strict=True))
    ys = dict(zip(lb, sizes(node, y), strict=True))
    x = _arranged(node, x, la, batch + rows + inner)
    y = _arranged(node, y, lb, batch + inner + cols)

    def flat(sizes_of: dict, group: Labels) -> int | SSAValue:
        return product(node, [sizes_of[label] for label in group])

    x = reshape_to(node, x, [*(xs[b] for b in batch), flat(xs, rows), flat(xs, inner)])
    y = reshape_to(node, y, [*(ys[b] for b in batch), flat(ys, inner), flat(ys, cols)])
    result = node.emit(ml.MatmulOp(x, y))
    batch_sizes = sizes(node, result)[: len(batch)]
    dims = [*batch_sizes, *(xs[label] for label in rows), *(ys[label] for label in cols)]
    return reshape_to(node, result, dims), batch + rows + cols


@converts("Einsum", since=12)
def einsum(node: Node) -> Sequence[Value]:
    inputs = [node.input(i) for i in range(len(node.proto.input))]
    operands, output = parse(node.attr("equation"), [len(shape_of(x)) for x in inputs])
    terms = [_diagonal(node, x, labels) for x, labels in zip(inputs, operands, strict=True)]
    current = _sum_away(node, *terms[0], {*output, *(lb for _, ls in terms[1:] for lb in ls)})
    for i, term in enumerate(terms[1:], start=1):
        later = {label for _, labels in terms[i + 1 :] for label in labels}
        keep = {*output, *later}
        other = _sum_away(node, *term, {*keep, *current[1]})
        current = _sum_away(node, *current, {*keep, *other[1]})
        current = _contract(node, current, other, keep)
    x, labels = _sum_away(node, *current, set(output))
    return [_arranged(node, x, labels, output)]
