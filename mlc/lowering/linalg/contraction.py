"""
Which `linalg.generic`s on memrefs are (batched) matmuls that `linalg-tile`'s micro-kernel
can run, and the elementwise epilogue some of them finish with.

A matmul generic has loops `(b_0, ..., b_{n-1}, i, k, j)`, iterators
`[parallel] * n + [parallel, reduction, parallel]`, and maps

    A: (batch..., i, k)    B: (batch..., k, j)    C: (b_0, ..., b_{n-1}, i, j)

where A's and B's batch results are batch loops or constants (a broadcast operand) and
may be fewer than `n` (an unbatched operand), on float row-major memrefs. A and B may
also be read transposed, `A: (.., k, i)` and `B: (.., j, k)`, with their batch results
anywhere (a transpose that `linalg-fuse-elementwise` folded into the map, as ONNX
Gemm's transB, `x @ w.T` and attention's `q @ k.T` give): the kernel reads A a scalar
at a time and packs B, so the layout is absorbed there. Its body is
`yield c + a * b`, or, as `linalg-fuse-elementwise` builds it, that sum followed by an
epilogue applied on the last iteration of every reduction loop (`k`; a convolution's
`(ci, kh, kw)`, see `mlc.lowering.cpu.conv_gemm`):

    %s = arith.addf %c, (arith.mulf %a, %b)
    %last = arith.cmpi eq, (linalg.index <k>), K - 1       (and-ed over the loops)
    %r = scf.if %last { <epilogue ops on %s and the extra inputs> } else { %s }
    linalg.yield %r

The kernel accumulates `C += A @ B`, and once a tile of C is final replays the
epilogue's scalar ops on it (`Epilogue.apply`, vectorised by LLVM over the tile's
columns), reading its inputs through their maps, loop indices made before the `scf.if`,
values made before the generic and buffers other than C (BERT's fused residual add).
A convolution that `mlc.lowering.cpu.conv_gemm` takes as a batched matmul carries an
`Image`: where the kernel reads its B operand, X', from the convolution's image.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.traits import is_side_effect_free

from mlc.lowering.support.loop_builder import Ops, collapse_trailing


def is_row_major(type_: MemRefType) -> bool:
    """Unit stride in the last dimension: rows are contiguous."""
    layout = type_.layout
    if isinstance(layout, NoneAttr):
        return True
    if isinstance(layout, StridedLayoutAttr):
        strides = layout.get_strides()
        return bool(strides) and strides[-1] == 1
    return False


def indices(b: Ops, map_: AffineMap, loops: Sequence[SSAValue]) -> list[SSAValue]:
    """The indices `map_` gives for `loops`; its results are loops or constants (`_plain`)."""
    result: list[SSAValue] = []
    for expr in map_.results:
        if isinstance(expr, AffineDimExpr):
            result.append(loops[expr.position])
        else:
            assert isinstance(expr, AffineConstantExpr)
            result.append(b.index(expr.value))
    return result


def _plain(map_: AffineMap) -> bool:
    return all(isinstance(e, AffineDimExpr | AffineConstantExpr) for e in map_.results)


@dataclass
class Epilogue:
    """The elementwise ops a contraction applies to each finished element of C."""

    body: Block
    """The `then` block of the `scf.if`: scalar ops ending in `scf.yield`."""

    accumulated: SSAValue
    """The value in `body` that stands for the finished sum."""

    inputs: dict[SSAValue, tuple[SSAValue, AffineMap]]
    """Block argument of the generic -> (memref, map over the generic's loops)."""

    last: dict[int, int]
    """Reduction loop -> its last index (what `linalg.index` of it reads in the epilogue)."""

    merged: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """Inputs read through a view of their dims from this one on merged into one."""

    loop_reads: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """`linalg.index` results made before the `scf.if` that `body` reads -> their loop."""

    def viewed(self, b: Ops) -> "Epilogue":
        """This epilogue reading its `merged` inputs through their merged views."""
        inputs = dict(self.inputs)
        for arg, keep in self.merged.items():
            source, map_ = inputs[arg]
            inputs[arg] = (collapse_trailing(b, source, keep), map_)
        return Epilogue(self.body, self.accumulated, inputs, self.last, {}, self.loop_reads)

    def apply(
        self, b: Ops, loops: Sequence[SSAValue], value: SSAValue, loaded: dict | None = None
    ) -> SSAValue:
        """The epilogue's scalar ops on `value` at `loops` (the k loop is ignored); the
        inputs in `loaded` (block argument -> its value) are read there already."""
        mapping: dict[SSAValue, SSAValue] = {self.accumulated: value, **(loaded or {})}
        for arg, (source, map_) in self.inputs.items():
            if arg not in mapping:
                mapping[arg] = b(memref.LoadOp.get(source, indices(b, map_, loops)))
        inner = {op.result: op.dim.value.data for op in self.body.ops if isinstance(op, IndexOp)}
        for read, d in {**self.loop_reads, **inner}.items():
            mapping[read] = b.index(self.last[d]) if d in self.last else loops[d]
        result: SSAValue | None = None
        for op in self.body.ops:
            if isinstance(op, scf.YieldOp):
                result = mapping[op.operands[0]]
            elif not isinstance(op, IndexOp):
                b.ops.append(op.clone(value_mapper=mapping))
                for old, new in zip(op.results, b.ops[-1].results):
                    mapping[old] = new
        assert result is not None
        return result


@dataclass(frozen=True)
class Image:
    """How to read X'[k, j] of a convolution as an implicit GEMM
    (`mlc.lowering.cpu.conv_gemm`), from its image."""

    source: SSAValue
    map: AffineMap
    """The image's map over the convolution's loops."""

    prefix: tuple[int, ...]
    """The convolution loop of each batch loop of the matmul."""

    reductions: tuple[int, ...]
    """The convolution loops merged into k, outermost first (sizes: the weight's dims)."""

    spatial: tuple[int, ...]
    """The convolution loops merged into j, outermost first (sizes: the output's dims)."""

    weight: SSAValue
    output: SSAValue
    pads: tuple[tuple[int, bool], ...] = ()
    """Where `source` is the image before a zero padding the packing stands in for: per
    dim, the pad before it and whether a read may fall outside the image."""

    def row_stride(self) -> int | None:
        """
        How far apart consecutive columns of X' within one output row lie in the image:
        `s` when the innermost spatial loop `ow` is read only by the image's last,
        unit-stride dim, as `s * ow + (terms without ow)` (a convolution of stride `s`);
        None for any other read.
        """
        ow = self.spatial[-1]
        *outer, last = self.map.results
        if any(ow in e.used_dims() for e in outer) or not is_row_major(self.source.type):  # pyright: ignore[reportArgumentType]
            return None
        terms = [last]
        if isinstance(last, AffineBinaryOpExpr) and last.kind == AffineBinaryOpKind.Add:
            terms = [last.lhs, last.rhs]
        reading = [t for t in terms if ow in t.used_dims()]
        if len(reading) != 1:
            return None
        return _stride_of(reading[0], ow)


def _stride_of(term: AffineExpr, ow: int) -> int | None:
    """`s` if `term` is `ow` (1) or `ow * s` / `s * ow` for a positive constant `s`."""
    if term == AffineDimExpr(ow):
        return 1
    if isinstance(term, AffineBinaryOpExpr) and term.kind == AffineBinaryOpKind.Mul:
        for one, other in ((term.lhs, term.rhs), (term.rhs, term.lhs)):
            if one == AffineDimExpr(ow) and isinstance(other, AffineConstantExpr):
                return other.value if other.value > 0 else None
    return None


@dataclass
class Matmul:
    """`C[batch, i, j] (+)= A[.., i, k] * B[.., k, j]` with an optional epilogue."""

    a: SSAValue
    b: SSAValue
    c: SSAValue
    maps: tuple[AffineMap, AffineMap, AffineMap]
    batch: int
    """Number of leading batch loops (0 for a plain matmul)."""

    epilogue: Epilogue | None

    sizes: tuple[int | None, int | None, int | None]
    """M, N and K where static."""

    image: Image | None = None
    """For a convolution: how to pack B from the image (`mlc.lowering.cpu.conv_gemm`)."""

    @property
    def element(self) -> AnyFloat:
        type_ = self.c.type
        assert isinstance(type_, MemRefType) and isinstance(type_.element_type, AnyFloat)
        return type_.element_type

    @property
    def accumulator(self) -> AnyFloat:
        """The type the kernel sums in: f32 for narrower floats (f16), whose sums are
        rounded to the element type once, as numpy's f16 matmul does, not at every step."""
        return Float32Type() if self.element.bitwidth < 32 else self.element

    @property
    def narrow(self) -> bool:
        """Whether the elements are narrower than the accumulator (`accumulator`)."""
        return self.accumulator != self.element

    def dim_of(self, operand: int, loop: str) -> int:
        """The dim of operand 0 (A) or 1 (B) that loop `i`, `k` or `j` reads."""
        expr = AffineDimExpr(self.batch + "ikj".index(loop))
        return self.maps[operand].results.index(expr)

    @property
    def transposed_a(self) -> bool:
        """A is read as `A[.., k, i]` (ONNX Gemm's transA, `x.T @ w`)."""
        return self.maps[0].results[-1] == AffineDimExpr(self.batch)

    @property
    def transposed_b(self) -> bool:
        """B is read as `B[.., j, k]` (ONNX Gemm's transB, `x @ w.T`, `q @ k.T`)."""
        return self.maps[1].results[-1] == AffineDimExpr(self.batch + 1)


def _matrix_reads(map_: AffineMap, batch: int, pair: tuple[int, int]) -> bool:
    """
    `map_` reads an operand at plain results: loops `pair` once each, in either order
    (a transposed operand), batch loops at most once each, constants (a broadcast).
    """
    used: list[int] = []
    for expr in map_.results:
        if isinstance(expr, AffineDimExpr):
            used.append(expr.position)
        elif not isinstance(expr, AffineConstantExpr):
            return False
    matrix = [d for d in used if d >= batch]
    return sorted(matrix) == sorted(pair) and len(set(used)) == len(used)


def _matmul_maps(maps: Sequence[AffineMap], batch: int) -> bool:
    """
    C indexes as `(b_0.., i, j)`; A reads `i` and `k`, B `k` and `j`, each with batch
    loops or constants in front or between, in any order, so long as B's last result
    is `j` or `k` (the packing reads B along its contiguous dim).
    """
    i, k, j = batch, batch + 1, batch + 2
    a_map, b_map, c_map = maps
    if c_map.results != tuple(AffineDimExpr(d) for d in (*range(batch), i, j)):
        return False
    if not (_matrix_reads(a_map, batch, (i, k)) and _matrix_reads(b_map, batch, (k, j))):
        return False
    return b_map.results[-1] in (AffineDimExpr(k), AffineDimExpr(j))


def multiply_add(block: Block) -> tuple[list[Operation], SSAValue] | None:
    """The ops after `s = c + a * b` at the start of `block`, and `s`."""
    a, b, c = block.args[0], block.args[1], block.args[-1]
    ops = list(block.ops)
    if len(ops) < 3 or not isinstance(ops[0], arith.MulfOp) or not isinstance(ops[1], arith.AddfOp):
        return None
    mul, add = ops[0], ops[1]
    if {mul.lhs, mul.rhs} != {a, b} or {add.lhs, add.rhs} != {c, mul.result}:
        return None
    return ops[2:], add.result


def _last_iteration(condition: SSAValue, sizes: dict[int, int]) -> set[Operation] | None:
    """
    The ops computing `condition` if it is "every loop in `sizes` is at its last
    iteration" (`index d == size - 1`, joined by `andi`), as `linalg-fuse-elementwise`
    builds it; else None.
    """
    op = condition.owner
    if isinstance(op, arith.AndIOp):
        left, right = _last_iteration(op.lhs, sizes), _last_iteration(op.rhs, sizes)
        return None if left is None or right is None else {op, *left, *right}
    if not isinstance(op, arith.CmpiOp) or op.predicate.value.data != 0:  # eq
        return None
    index, last = op.lhs.owner, op.rhs.owner
    if not isinstance(index, IndexOp) or not isinstance(last, arith.ConstantOp):
        return None
    d = index.dim.value.data
    if not isinstance(last.value, IntegerAttr) or sizes.get(d) != last.value.value.data + 1:
        return None
    return {op, index, last}


def _outside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    parent = owner if isinstance(owner, Operation) else owner.parent_op()
    return parent is None or not op.is_ancestor(parent)


def _buffer(value: SSAValue) -> SSAValue:
    """The buffer a memref value views (itself if it is not a view)."""
    while isinstance(value.owner, memref.SubviewOp | memref.CastOp | memref.CollapseShapeOp):
        value = value.owner.operands[0]
    return value


def _self_contained(op: GenericOp, body: Block, given: set[SSAValue]) -> bool:
    """Whether `body` reads only its own values, `given` and values made before `op`,
    `linalg.index` only at its top level (where the replay can give it the loop's value),
    and memory only by loads not from C (a fused runtime broadcast's `tensor.extract`)."""
    if any(isinstance(o, IndexOp) and o.parent_block() is not body for o in body.walk()):
        return False
    c = _buffer(op.outputs[0])
    for inner in body.walk():
        if is_side_effect_free(inner):
            continue
        if not isinstance(inner, memref.LoadOp) or _buffer(inner.memref) is c:
            return False
    inside = set(given)
    for inner in body.walk():
        inside.update(inner.results)
        inside.update(a for region in inner.regions for bb in region.blocks for a in bb.args)
    return all(v in inside or _outside(v, op) for inner in body.walk() for v in inner.operands)


def epilogue_of(
    op: GenericOp, rest: list[Operation], total: SSAValue, sizes: dict[int, int]
) -> Epilogue | None:
    """The epilogue of `op` if `rest` is `last iteration ? epilogue : total; yield`."""
    if len(rest) < 2 or min(sizes.values(), default=0) < 1:
        return None
    *condition, branch, yield_ = rest
    if not (
        isinstance(branch, scf.IfOp)
        and isinstance(yield_, YieldOp)
        and len(branch.results) == 1
        and list(yield_.operands) == [branch.results[0]]
    ):
        return None
    checked = _last_iteration(branch.cond, sizes)
    if checked is None or not checked <= set(condition) or len(checked) < 3 * len(sizes):
        return None
    reads = [o for o in condition if isinstance(o, IndexOp) and o not in checked]
    if len(checked) + len(reads) != len(condition):  # loop indices made before the if only
        return None
    loop_reads = {o.result: o.dim.value.data for o in reads}
    otherwise = list(branch.false_region.block.ops)
    if len(otherwise) != 1 or list(otherwise[0].operands) != [total]:
        return None
    body = branch.true_region.block
    args = op.body.block.args
    extra = {
        args[n]: (value, op.indexing_maps.data[n].data)
        for n, value in enumerate(op.inputs)
        if n >= 2
    }
    if not _self_contained(op, body, {total, *extra, *loop_reads}):
        return None  # reads something the replay cannot provide
    if not all(_plain(map_) for _, map_ in extra.values()):
        return None
    if any(source is op.outputs[0] for source, _ in extra.values()):
        return None  # reads C itself, which the kernel has overwritten by then
    return Epilogue(body, total, extra, {d: n - 1 for d, n in sizes.items()}, {}, loop_reads)


def float_buffers(op: GenericOp, operands: Sequence[SSAValue]) -> bool:
    """Every operand a memref; `operands` row-major, of one float element type."""
    if not all(isinstance(v.type, MemRefType) for v in op.operands):
        return False
    types = [v.type for v in operands]
    if not all(isinstance(t, MemRefType) and is_row_major(t) for t in types):
        return False
    elements = {t.element_type for t in types if isinstance(t, MemRefType)}
    return len(elements) == 1 and isinstance(next(iter(elements)), AnyFloat)


def matmul_of(op: GenericOp) -> Matmul | None:
    """The (batched) matmul `op` computes, with its epilogue, or None (module docstring)."""
    if op.res or len(op.inputs) < 2 or len(op.outputs) != 1:
        return None
    iterators = [it.data.value for it in op.iterator_types.data]
    batch = len(iterators) - 3
    if batch < 0 or iterators != ["parallel"] * batch + ["parallel", "reduction", "parallel"]:
        return None
    maps = [m.data for m in op.indexing_maps.data]
    a, b, c = op.inputs[0], op.inputs[1], op.outputs[0]
    if not _matmul_maps((maps[0], maps[1], maps[-1]), batch):
        return None
    if not float_buffers(op, (a, b, c)) or (found := multiply_add(op.body.block)) is None:
        return None
    rest, total = found
    a_shape = a.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    i_dim, k_dim = (maps[0].results.index(AffineDimExpr(batch + d)) for d in (0, 1))
    m, k = (s if s >= 0 else None for s in (a_shape[i_dim], a_shape[k_dim]))
    n = c.type.get_shape()[-1]  # pyright: ignore[reportAttributeAccessIssue]
    epilogue = None
    if len(op.inputs) > 2 or len(rest) > 1:
        epilogue = epilogue_of(op, rest, total, {batch + 1: k}) if k is not None else None
        if epilogue is None:
            return None
    elif not isinstance(rest[0], YieldOp) or list(rest[0].operands) != [total]:
        return None
    sizes = (m, n if n >= 0 else None, k)
    return Matmul(a, b, c, (maps[0], maps[1], maps[-1]), batch, epilogue, sizes)


def _leaves_alone(op: Operation, c: SSAValue) -> bool:
    """Whether `op` neither reads nor writes `c`: no memory effects, or a new buffer."""
    if is_side_effect_free(op):
        return True
    if isinstance(op, memref.AllocOp):
        return True
    return isinstance(op, memref.DeallocOp) and op.memref is not c


def _uses(op: Operation, value: SSAValue) -> bool:
    """Whether `op` or an op nested in it reads `value`."""
    return any(value in inner.operands for inner in op.walk())


def _private_from(fill: Operation, c: SSAValue) -> bool:
    """
    Whether nothing before `fill` can reach `c` by another name: `c` is a buffer
    allocated in `fill`'s block, and no op of that block before `fill` uses it (a view
    made there could write it later). An op that does not use `c` itself then leaves
    it alone.
    """
    alloc = c.owner
    block = fill.parent_block()
    if not isinstance(alloc, memref.AllocOp) or block is None or alloc.parent_block() is not block:
        return False
    op = alloc.next_op
    while op is not None and op is not fill:
        if _uses(op, c):
            return False
        op = op.next_op
    return op is fill


def _is_zero_fill(fill: GenericOp, c: SSAValue) -> bool:
    """Whether `fill` only writes the float constant 0 to every element of `c`."""
    if fill.inputs or list(fill.outputs) != [c] or fill.res:
        return False
    ops = list(fill.body.block.ops)
    if len(ops) != 2 or not isinstance(ops[0], arith.ConstantOp):
        return False
    value = ops[0].value
    if not isinstance(ops[1], YieldOp) or list(ops[1].operands) != [ops[0].result]:
        return False
    if not isinstance(value, FloatAttr) or value.value.data != 0.0:
        return False
    if any(it.data.value != "parallel" for it in fill.iterator_types.data):
        return False
    return fill.indexing_maps.data[0].data.inverse_permutation() is not None  # every element


def zero_fill_before(op: GenericOp, c: SSAValue) -> GenericOp | None:
    """
    The generic before `op` that only fills `c` with a float constant 0, or None:
    the kernel can then store its first K block instead of adding it to the fill. Ops
    without memory effects may sit between the two (the `memref.get_global` of a bias
    the epilogue reads, as ONNX Gemm gives), and so may the allocation and release of
    other buffers (which `bufferize` leaves behind when a dynamic size is read from one).
    Where `c` is a buffer of the function's own that nothing reaches before the fill
    by another name (`_private_from`), any op that does not use `c` may sit between
    too: a backward pass fills every gradient's buffer early and computes the gradient
    kernels later (the MLP step's 4 MB weight gradients were zeroed, then overwritten).
    """
    between: list[Operation] = []
    fill = op.prev_op
    while fill is not None and not (isinstance(fill, GenericOp) and c in fill.outputs):
        between.append(fill)
        fill = fill.prev_op
    if not isinstance(fill, GenericOp) or not _is_zero_fill(fill, c):
        return None
    if all(_leaves_alone(other, c) for other in between):
        return fill
    if any(_uses(other, c) for other in between) or not _private_from(fill, c):
        return None
    return fill
