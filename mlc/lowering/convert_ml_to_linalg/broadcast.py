"""
Numpy broadcasting of dynamic dims, decided at run time where it cannot be at compile time.

An indexing map reads an operand dim either along its loop or at index 0, fixed when
compiling. A dynamic dim facing a result dim it is not provably equal to may be 1 at
run time, and numpy then broadcasts it; or it may be neither 1 nor the result's size,
which is an error. For such dims the lowering decides at run time:

- the result size is the numpy broadcast of the operand sizes (`select`s on
  `size == 1`); where they conflict it is the smallest of them, so that every read
  below stays inside its operand;
- a `cf.assert` per result dim checks that each such size is 1 or the result size;
  a failed check becomes `mlc.RuntimeCheckError` with the op's location once the
  compiled call returns (`mlc.backend.assertions`);
- the operand is read with `tensor.extract` at `index * stride` in such a dim, the
  stride being 1 when the sizes match and 0 otherwise (a broadcast, or a conflict):

      %f = arith.select %same, %c1, %c0 : index      // %same: dim(%y, 0) == %size0
      ... linalg.generic ins(%x) outs(%e) {
        %i = linalg.index 0 : index
        %j = arith.muli %i, %f : index
        %v = tensor.extract %y[%j] : tensor<?xf32>

Sizes are provably equal when they are the same static number or trace back to the
same dim (`size_key`): a dim of one value, through the generics and `tensor.empty`s
the lowering built from it, or argument dims that share a name in `ml.dim_names`.
Those, static 1s and static sizes keep plain indexing maps, so static programs, and
dynamic ones whose sizes are tied, lower as before: one generic, fusable, with no check.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, cf, func, tensor
from xdsl.dialects.builtin import ArrayAttr, IndexType, StringAttr, i64
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from mlc import shapes
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    dim_value,
    element_type,
    iterator_types,
    tensor_type,
)
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.loop_builder import constant_index

# ---------------------------------------------------------------------------
# Provably equal sizes
# ---------------------------------------------------------------------------


def size_key(value: SSAValue, axis: int) -> Hashable:
    """A key that two dims share only if their sizes are equal whatever the inputs."""
    size = tensor_type(value).get_shape()[axis]
    if shapes.is_static(size):
        return size
    owner = value.owner
    if isinstance(owner, GenericOp) and value in owner.res:
        return size_key(owner.outputs[owner.res.index(value)], axis)
    if isinstance(owner, tensor.EmptyOp):
        shape = tensor_type(value).get_shape()
        position = sum(not shapes.is_static(d) for d in shape[:axis])
        return index_key(owner.dynamic_sizes[position])
    if isinstance(owner, ml.UnaryOp | ml.CastOp):
        return size_key(owner.operands[0], axis)
    if isinstance(value, BlockArgument) and (name := argument_dim_name(value, axis)):
        return ("dim name", name)
    return (value, axis)


def index_key(size: SSAValue) -> Hashable:
    """
    `size_key` of an index value: the dim it reads, the number it is, or itself.

    Casts and shape tensors built from dims are looked through, so a size that went
    through a frontend's shape computation (`tensor.dim` -> `index_cast` ->
    `from_elements` -> `extract` -> `index_cast`) is still the dim it came from.
    """
    owner = size.owner
    if isinstance(owner, tensor.DimOp) and (axis := constant_index(owner.index)) is not None:
        return size_key(owner.source, axis)
    if isinstance(owner, arith.IndexCastOp) and all(
        isinstance(t, IndexType) or t == i64 for t in (owner.input.type, owner.result.type)
    ):
        return index_key(owner.input)  # between index and i64: the same number
    if (
        isinstance(owner, tensor.ExtractOp)
        and isinstance(shape := owner.tensor.owner, tensor.FromElementsOp)
        and len(owner.indices) == 1
        and (i := constant_index(owner.indices[0])) is not None
    ):
        return index_key(shape.elements[i])
    if (number := constant_index(size)) is not None:
        return number
    return size


def argument_dim_name(arg: BlockArgument, axis: int) -> str | None:
    """The `ml.dim_names` entry of a function argument's dim, if it has one."""
    function = arg.owner.parent_op() if isinstance(arg.owner, Block) else None
    if not isinstance(function, func.FuncOp) or function.arg_attrs is None:
        return None
    names = function.arg_attrs.data[arg.index].data.get(ml.DIM_NAMES)
    if not isinstance(names, ArrayAttr) or axis >= len(names.data):
        return None
    name: Attribute = names.data[axis]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return name.data if isinstance(name, StringAttr) and name.data else None


# ---------------------------------------------------------------------------
# Reading an operand broadcast to the loops
# ---------------------------------------------------------------------------


@dataclass
class BroadcastRead:
    """
    How the loops of a generic read one operand.

    Operand dim `i` faces loop `offset + i` and is read at `index * strides[i]`: a
    stride of 1 walks the loop, 0 stays at index 0, and an `index` value (1 or 0)
    decides at run time.
    """

    value: SSAValue
    offset: int
    strides: list[Index]

    @property
    def is_static(self) -> bool:
        """Whether an indexing map can express the read (no run-time stride)."""
        return all(isinstance(s, int) for s in self.strides)

    def indexing_map(self, num_loops: int) -> AffineMap:
        exprs = [
            AffineExpr.dimension(self.offset + i) if stride else AffineExpr.constant(0)
            for i, stride in enumerate(self.strides)
        ]
        return AffineMap(num_loops, 0, tuple(exprs))

    def extract(self) -> SSAValue:
        """Read the element in a generic body: `tensor.extract` at the strided indices."""
        calc = IndexCalc.in_body()
        coords: list[SSAValue] = []
        for i, stride in enumerate(self.strides):
            if stride == 0:
                coords.append(calc.value(0))
                continue
            coords.append(calc.value(calc.mul(IndexOp(self.offset + i).result, stride)))
        return tensor.ExtractOp(self.value, coords, element_type(self.value)).result


def runtime_stride(rewriter: PatternRewriter, size: Index, result: Index) -> SSAValue:
    """1 where the operand's size is the result's (read along the loop), else 0."""
    calc = IndexCalc(rewriter.insert)
    same = rewriter.insert(arith.CmpiOp(calc.value(size), calc.value(result), "eq")).result
    return rewriter.insert(arith.SelectOp(same, calc.value(1), calc.value(0))).result


def check_sizes(
    rewriter: PatternRewriter, op: Operation, sizes: Sequence[Index], result: Index, what: str
) -> None:
    """`cf.assert` that each of `sizes` is 1 or `result`; `what` ends the message."""
    calc = IndexCalc(rewriter.insert)
    ok: SSAValue | None = None
    for size in sizes:
        value = calc.value(size)
        equal = rewriter.insert(arith.CmpiOp(value, calc.value(result), "eq")).result
        one = rewriter.insert(arith.CmpiOp(value, calc.value(1), "eq")).result
        fits = rewriter.insert(arith.OrIOp(equal, one)).result
        ok = fits if ok is None else rewriter.insert(arith.AndIOp(ok, fits)).result
    if ok is not None:
        rewriter.insert(cf.AssertOp(ok, f"'{op.name}' op {what}"))


def broadcast_size(rewriter: PatternRewriter, sizes: Sequence[Index]) -> Index:
    """
    The numpy broadcast of `sizes`; the smallest size other than 1 where they conflict.

    Folded pairwise: `a == 1 ? b : (b == 1 ? a : min(a, b))`.
    """
    calc = IndexCalc(rewriter.insert)
    result = sizes[0]
    for size in sizes[1:]:
        a, b = calc.value(result), calc.value(size)
        a_is_one = rewriter.insert(arith.CmpiOp(a, calc.value(1), "eq")).result
        b_is_one = rewriter.insert(arith.CmpiOp(b, calc.value(1), "eq")).result
        smaller = calc.value(calc.min(a, b))
        not_a = rewriter.insert(arith.SelectOp(b_is_one, a, smaller)).result
        result = rewriter.insert(arith.SelectOp(a_is_one, b, not_a)).result
    return result


def describe(dims: Sequence[tuple[int, int]], operands: int) -> str:
    """`operand #0 dim 1, operand #1 dim 0`, or `operand dim 1` for a single operand."""
    if operands == 1:
        return ", ".join(f"operand dim {axis}" for _, axis in dims)
    return ", ".join(f"operand #{k} dim {axis}" for k, axis in dims)


def broadcast_operands(
    rewriter: PatternRewriter,
    op: Operation,
    operands: Sequence[SSAValue],
    result_shape: Sequence[int],
    ranks: Sequence[int] | None = None,
) -> tuple[list[Index], list[BroadcastRead]]:
    """
    The sizes of a numpy broadcast of `operands` to `result_shape`, and each operand's read.

    Inserts the size computations and checks the run-time cases need (see the module
    docstring); `result_shape` is the result type's, whose static dims are taken as given.
    `ranks` limits the broadcast to the leading dims of each operand (matmul batch dims).
    """
    rank = len(result_shape)
    if ranks is None:
        ranks = [tensor_type(v).get_num_dims() for v in operands]
    reads = [BroadcastRead(v, rank - n, [1] * n) for v, n in zip(operands, ranks, strict=True)]
    sizes: list[Index] = []
    for r, declared in enumerate(result_shape):
        aligned = [(read, r - read.offset) for read in reads if r >= read.offset]
        for read, a in aligned:
            if tensor_type(read.value).get_shape()[a] == 1 and declared != 1:
                read.strides[a] = 0
        others = [(read, a) for read, a in aligned if read.strides[a] != 0]
        sizes.append(result_dim(rewriter, others, declared))
        unsure = [(read, a) for read, a in others if size_key(read.value, a) != key_of(sizes[-1])]
        if not unsure:
            continue
        for read, a in unsure:
            read.strides[a] = runtime_stride(
                rewriter, dim_value(rewriter, read.value, a), sizes[-1]
            )
        listed = [(reads.index(read), a) for read, a in unsure]
        want = f"1 or {declared}" if shapes.is_static(declared) else "1 or one common size"
        check_sizes(
            rewriter,
            op,
            [dim_value(rewriter, read.value, a) for read, a in unsure],
            sizes[-1],
            f"{describe(listed, len(operands))} must be {want} (broadcast to result dim {r})",
        )
    return sizes, reads


def result_dim(
    rewriter: PatternRewriter, others: Sequence[tuple[BroadcastRead, int]], declared: int
) -> Index:
    """
    One result dim: static as declared, else the size the operand dims other than a
    static 1 agree on when provably one, else their run-time broadcast.
    """
    if shapes.is_static(declared):
        return declared
    distinct = {size_key(read.value, a): (read, a) for read, a in reversed(others)}
    if not distinct:
        return 1
    sizes = [dim_value(rewriter, read.value, a) for read, a in reversed(distinct.values())]
    return sizes[0] if len(sizes) == 1 else broadcast_size(rewriter, sizes)


def key_of(size: Index) -> Hashable:
    return size if isinstance(size, int) else index_key(size)


def copy_generic_reading(
    rewriter: PatternRewriter, read: BroadcastRead, init: SSAValue
) -> SSAValue:
    """An all-parallel generic over `init` that copies `read`'s operand broadcast to it."""
    rank = tensor_type(init).get_num_dims()
    out_map = AffineMap.identity(rank)
    if read.is_static:
        maps, inputs = [read.indexing_map(rank), out_map], [read.value]
        (result,) = build_generic(
            rewriter, inputs, [init], maps, iterator_types(rank), lambda a: a[0]
        )
        return result
    (result,) = build_generic(
        rewriter, [], [init], [out_map], iterator_types(rank), lambda _: read.extract()
    )
    return result


def broadcast_read(
    rewriter: PatternRewriter,
    op: Operation,
    x: SSAValue,
    target: Sequence[Index],
    target_shape: Sequence[int],
    name: str = "operand",
) -> BroadcastRead:
    """
    How to read `x` broadcast to the sizes `target` (numpy.broadcast_to).

    `target_shape` is the target's type; `name` names `x` in the check's message.
    """
    shape = tensor_type(x).get_shape()
    read = BroadcastRead(x, len(target) - len(shape), [1] * len(shape))
    for a, size in enumerate(shape):
        r = read.offset + a
        if size == 1 and target_shape[r] != 1:
            read.strides[a] = 0
        elif size_key(x, a) != key_of(target[r]):
            read.strides[a] = runtime_stride(rewriter, dim_value(rewriter, x, a), target[r])
            static = shapes.is_static(target_shape[r])
            want = f"1 or {target_shape[r]}" if static else "1 or the target size"
            message = f"{name} dim {a} must be {want} (broadcast to result dim {r})"
            check_sizes(rewriter, op, [dim_value(rewriter, x, a)], target[r], message)
    return read
