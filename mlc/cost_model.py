"""
The cost model: FLOPs and bytes moved per `ml` op, from its static shapes.

Graph passes that choose between equivalent programs (`matmul-chain-reorder` today;
fusion and tiling later) ask this module, so that every decision is priced by one
set of rules. The rules are deliberately first-order and documented here, not
measured:

- `ml.matmul`: `2 * m * k * n` per batch element (one multiply, one add per term).
- elementwise ops (`ml.add`, `ml.exp`, `ml.select`, ...): 1 FLOP per result
  element; a transcendental counts as one.
- reductions (`ml.reduce_*`): 1 FLOP per input element.
- `ml.softmax`: 5 per element (max, subtract, exp, sum, divide);
  `ml.layer_norm`: 8 per element; `ml.batch_norm`: 4 per element.
- `ml.attention`: `2 * (D + Dv) + 5` per score (both products, then the softmax's 5),
  `(batch..., H, Sq, Sk)` scores.
- `ml.conv1d/2d/3d`: `2 * (C / groups) * KH * KW` (the kernel's volume) per output
  element, plus 1 with a bias; pooling: the kernel's volume per output element.
- data movement (`ml.transpose`, `ml.reshape`, `ml.cast`, `ml.slice`, ...): 0 FLOPs.

Bytes moved is the unfused count: every operand is read once and the result is
written once. Both functions return None where a dimension that enters the count
is dynamic, or for an op that is not an `ml` op.

Where dims are dynamic, a cost is a `Polynomial` in symbols that stand for them
(each at least 1): `2*m*k*n` for a product. Two such costs compare only where the
comparison holds for every value of the symbols (`provably_le`), so a decision
taken on them holds at run time whatever the sizes.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb, prod

from xdsl.dialects.builtin import FixedBitwidthType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import is_side_effect_free

from mlc import shapes
from mlc.dialects.ml import (
    AttentionOp,
    BatchNormOp,
    BinaryOp,
    BroadcastToOp,
    CastOp,
    CmpOp,
    ConcatOp,
    ConvOp,
    LayerNormOp,
    MatmulOp,
    MLOp,
    PoolOp,
    ReduceOp,
    ReshapeOp,
    SelectOp,
    SliceOp,
    SoftmaxOp,
    TransposeOp,
    UnaryOp,
)
from mlc.dialects.ml.scan import ArgReduceOp, CumSumOp

# FLOPs per element for the normalisations (see the module docstring).
PER_ELEMENT_FLOPS: dict[type[MLOp], int] = {SoftmaxOp: 5, LayerNormOp: 8, BatchNormOp: 4}


def matmul_flops(m: int, k: int, n: int, batch: int = 1) -> int:
    """The FLOPs of `batch` products `(m, k) @ (k, n)`: one multiply and one add per term."""
    return 2 * batch * m * k * n


# ---------------------------------------------------------------------------
# Symbolic costs
# ---------------------------------------------------------------------------

Dim = int | str  # a static size, or a symbol standing for a dynamic size (>= 1)
Monomial = tuple[str, ...]  # sorted symbols, repeated for powers; () is the constant


@dataclass(frozen=True)
class Polynomial:
    """A cost with non-negative integer coefficients in dim symbols, each >= 1."""

    terms: frozenset[tuple[Monomial, int]] = frozenset()

    @staticmethod
    def of_terms(terms: Iterable[tuple[Monomial, int]]) -> "Polynomial":
        summed: Counter[Monomial] = Counter()
        for monomial, coefficient in terms:
            summed[tuple(sorted(monomial))] += coefficient
        return Polynomial(frozenset((m, c) for m, c in summed.items() if c))

    @staticmethod
    def product(*factors: Dim) -> "Polynomial":
        """The monomial `factors[0] * factors[1] * ...`."""
        constant = prod(f for f in factors if isinstance(f, int))
        return Polynomial.of_terms([(tuple(f for f in factors if isinstance(f, str)), constant)])

    def __add__(self, other: "Polynomial") -> "Polynomial":
        return Polynomial.of_terms([*self.terms, *other.terms])

    def constant(self) -> int | None:
        """The value if no symbol occurs, else None."""
        if any(monomial for monomial, _ in self.terms):
            return None
        return sum(c for _, c in self.terms)

    def provably_le(self, other: "Polynomial") -> bool:
        """
        Whether `self <= other` for every value >= 1 of every symbol.

        Substituting `x = 1 + y` for each symbol, `other - self` is non-negative for
        all `y >= 0` when every coefficient of the result is: a sufficient test that
        decides `n*m <= n*k*m` (it is `(1+n)(1+m)k`) and any comparison of constants.
        """
        shifted: Counter[Monomial] = Counter()
        for sign, poly in ((1, other), (-1, self)):
            for monomial, coefficient in poly.terms:
                for term, count in _shift(monomial):
                    shifted[term] += sign * coefficient * count
        return all(c >= 0 for c in shifted.values())

    def __str__(self) -> str:
        def term(monomial: Monomial, coefficient: int) -> str:
            factors = [str(coefficient)] if coefficient != 1 or not monomial else []
            return "*".join([*factors, *monomial])

        ordered = sorted(self.terms, key=lambda t: (-len(t[0]), t[0]))
        return " + ".join(term(m, c) for m, c in ordered) or "0"


def _shift(monomial: Monomial) -> list[tuple[Monomial, int]]:
    """The monomial with each `x` replaced by `1 + x`, expanded: (monomial, count) terms."""
    terms: list[tuple[Monomial, int]] = [((), 1)]
    for symbol, power in Counter(monomial).items():
        terms = [
            ((*m, *([symbol] * k)), c * comb(power, k)) for m, c in terms for k in range(power + 1)
        ]
    return terms


def matmul_cost(m: Dim, k: Dim, n: Dim) -> Polynomial:
    """`matmul_flops` with symbolic dims."""
    return Polynomial.product(2, m, k, n)


def elements_cost(*dims: Dim) -> Polynomial:
    """The elements of a tensor of `dims`: the FLOPs of an elementwise op on it."""
    return Polynomial.product(*dims)


def _shape(value: SSAValue) -> shapes.Shape | None:
    return value.type.get_shape() if isinstance(value.type, TensorType) else None


def _elements(value: SSAValue) -> int | None:
    shape = _shape(value)
    return None if shape is None else shapes.num_elements(shape)


def _times(count: int | None, factor: int | None) -> int | None:
    return None if count is None or factor is None else count * factor


def _matmul(op: MatmulOp) -> int | None:
    # Every result element is a dot product over the contracting dimension k.
    a, b = _shape(op.a), _shape(op.b)
    if a is None or b is None:
        return None
    k = shapes.join_dims(a[-1], b[-2], "contracting dimensions differ")
    return _times(_elements(op.result), 2 * k if shapes.is_static(k) else None)


def _attention(op: AttentionOp) -> int | None:
    q, k, v = _shape(op.q), _shape(op.k), _shape(op.v)
    if q is None or k is None or v is None:
        return None
    scores = shapes.num_elements((*q[:-1], k[-2]))
    per_score = 2 * (q[-1] + v[-1]) + 5
    return _times(
        scores, per_score if shapes.is_static(q[-1]) and shapes.is_static(v[-1]) else None
    )


def _conv(op: ConvOp) -> int | None:
    w = _shape(op.w)
    if w is None or not all(shapes.is_static(d) for d in w[1:]):
        return None
    per_output = 2 * prod(w[1:]) + (1 if op.bias is not None else 0)
    return _times(_elements(op.result), per_output)


def _pool(op: PoolOp) -> int | None:
    return _times(_elements(op.result), prod(op.kernel.get_values()))


def flops(op: Operation) -> int | None:
    """The FLOPs `op` performs, or None (dynamic shape, or not an `ml` op)."""
    match op:
        case MatmulOp():
            return _matmul(op)
        case ConvOp():
            return _conv(op)
        case PoolOp():
            return _pool(op)
        case ReduceOp() | ArgReduceOp() | CumSumOp():
            return _elements(op.x)
        case CastOp():
            return 0  # a conversion, not arithmetic: priced by bytes_moved
        case BinaryOp() | UnaryOp() | CmpOp() | SelectOp():
            return _elements(op.results[0])
        case AttentionOp():
            return _attention(op)
        case SoftmaxOp() | LayerNormOp() | BatchNormOp():
            return _times(_elements(op.results[0]), PER_ELEMENT_FLOPS[type(op)])
        case MLOp():
            return 0  # data movement
        case _:
            return None


def element_bytes(element_type: Attribute) -> int | None:
    """The storage size of one element (i1 takes a byte), or None if unknown."""
    if isinstance(element_type, FixedBitwidthType):
        return element_type.size
    return None


def tensor_bytes(value: SSAValue) -> int | None:
    """The bytes of a statically shaped tensor value, or None."""
    if not isinstance(value.type, TensorType):
        return None
    size = element_bytes(value.type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return _times(_elements(value), size)


def _total(sizes: Sequence[int | None]) -> int | None:
    return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)


def bytes_moved(op: Operation) -> int | None:
    """Bytes read and written by `op` run alone: each operand once, plus the result."""
    if not isinstance(op, MLOp):
        return None
    return _total([tensor_bytes(v) for v in (*op.operands, *op.results)])


# ---------------------------------------------------------------------------
# Fusion: recompute or materialise
# ---------------------------------------------------------------------------

# The FLOPs one core does, vectorised, in the time it moves one byte to or from memory
# (about 228 GFLOP/s against 34 GB/s on two Zen 4 cores, rounded down for the scalar
# and shuffle work around the arithmetic).
FLOPS_PER_BYTE = 4

# A `math` op (exp, tanh, erf, ...) as a short polynomial with range reduction.
TRANSCENDENTAL_FLOPS = 10


def scalar_op_flops(op: Operation) -> int:
    """The FLOPs of one scalar op in a `linalg.generic` body (constants, indices, yields: 0)."""
    name = op.name
    if name.startswith("math."):
        return TRANSCENDENTAL_FLOPS
    if name.startswith("arith.") and name not in ("arith.constant", "arith.index_cast"):
        return 1
    return 0


def recompute_is_cheaper(
    flops: int,
    input_bytes: int,
    result_bytes: int,
    reads: Sequence[int | None],
    kept: bool,
) -> bool:
    """
    Should an elementwise producer be recomputed in each consumer rather than stored?

    Per producer element, in FLOPs (bytes count `FLOPS_PER_BYTE` each): recomputing
    costs, for each consumer, `reads` times its `flops` and the `input_bytes` it
    streams (`reads` is how often the consumer reads each element: 1, or the size of
    the dims it broadcasts over; None if that is dynamic). Materialising costs one
    read of the `result_bytes` per consumer, plus, unless the producer is `kept`
    anyway for users that cannot fuse it, its own run: the flops, its inputs and one
    write of the result.
    """
    if any(r is None for r in reads):
        return False  # a dynamic broadcast could repeat the work without bound
    recompute = sum(r for r in reads if r is not None) * (flops + FLOPS_PER_BYTE * input_bytes)
    materialise = FLOPS_PER_BYTE * result_bytes * len(reads)
    if not kept:
        materialise += flops + FLOPS_PER_BYTE * (input_bytes + result_bytes)
    return recompute <= materialise


# ---------------------------------------------------------------------------
# The forward/backward split: save an activation or recompute it
# ---------------------------------------------------------------------------

# A dynamic dim, where the split weighs a tensor it might save: any size gives a valid
# program, this one only decides which; 64 is a batch or sequence length of the order
# the training examples use.
NOMINAL_DYNAMIC_DIM = 64

# A reduction is recomputed in a backward only if its input is at most this many times
# its result's size (functorch's partitioner uses the same ratio): summing a large
# tensor again costs a pass over it, saving the small result costs little.
RECOMPUTED_REDUCTION_RATIO = 4


def residual_bytes(value: SSAValue) -> int | None:
    """
    The bytes a forward program keeps to hand `value` to its backward, dynamic dims
    counted as `NOMINAL_DYNAMIC_DIM`; None for a value that is not a tensor (an index,
    a size), which is recomputed, never saved.
    """
    if not isinstance(value.type, TensorType):
        return None
    size = element_bytes(value.type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    shape = value.type.get_shape()  # pyright: ignore[reportUnknownMemberType]
    if size is None:
        return None
    return size * prod(d if shapes.is_static(d) else NOMINAL_DYNAMIC_DIM for d in shape)


def _nominal_elements(value: SSAValue) -> int:
    count = residual_bytes(value)
    element = element_bytes(value.type.element_type)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    return 0 if count is None or not element else count // element


def recompute_refusal(op: Operation) -> str | None:
    """
    Why a backward program may not recompute `op` from saved values, or None if it
    may: only cheap ops are recomputed (elementwise, data movement, broadcasts, shape
    arithmetic, constants, reductions of inputs at most `RECOMPUTED_REDUCTION_RATIO`
    times their result), never a contraction, a window, a normalisation, a gather or
    scatter, a loop or branch, nor an op with side effects (a random draw included).
    """
    if op.regions:
        return f"'{op.name}' holds regions (a loop or a branch runs once)"
    if not is_side_effect_free(op):
        return f"'{op.name}' has side effects"
    match op:
        case MatmulOp() | ConvOp() | AttentionOp() | PoolOp():
            return f"'{op.name}' is too costly to recompute"
        case ReduceOp() | ArgReduceOp() | CumSumOp():
            size_in, size_out = _nominal_elements(op.operands[0]), _nominal_elements(op.results[0])
            if size_in > RECOMPUTED_REDUCTION_RATIO * max(size_out, 1):
                return f"'{op.name}' reduces a large input"
            return None
        case BinaryOp() | UnaryOp() | CmpOp() | SelectOp() | CastOp():
            return None
        case TransposeOp() | ReshapeOp() | BroadcastToOp() | SliceOp() | ConcatOp():
            return None  # data movement
        case MLOp():
            return f"'{op.name}' is not elementwise or data movement"
        case _:
            if op.name.split(".")[0] in ("arith", "tensor"):
                return None  # constants, shape and index arithmetic
            return f"'{op.name}' is not an ml op"
