"""
The B panels of a matmul inside an `scf.for` whose B does not change in the loop, packed
once, before the loop, instead of on every iteration.

An LSTM's step multiplies the hidden state by the recurrent weights, `h @ R^T`, once a
time step: where R is no constant held at compile time (`constant_panels`: a weight
given as an argument, or IR read from text), `pack_b` copied all of R on every step.

    scf.for %t = ... {                         %Bp = pack_b(%R)
      C = A(%t) @ %R               ==>         scf.for %t = ... {
    }                                            C = A(%t) @ panels %Bp
                                               }
                                               memref.dealloc %Bp

B is invariant in a loop when it is defined outside it and nothing in the loop may
write the buffer it views: every use of that buffer (through views) inside the loop is
a read (`memref.load`, vector loads, a generic's input, `memref.dim`) or another view.
Any other use (a store, a generic's output, a call, a copy) keeps the packing where it
is. The packing leaves every `scf.for` around the matmul in which B is invariant, up to
the first op of another kind (`scf.parallel`, `scf.if`, `scf.while`, the function).
"""

from xdsl.dialects import memref, scf, vector
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from mlc.lowering.cpu.matmul_packing import pack_b
from mlc.lowering.linalg.contraction import Matmul
from mlc.lowering.support.loop_builder import Ops
from mlc.tiling_model import MatmulTiles

VIEWS = (
    memref.SubviewOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
    memref.ReinterpretCastOp,
)
READS = (memref.LoadOp, memref.DimOp, vector.LoadOp, vector.MaskedLoadOp)


def buffer_root(value: SSAValue) -> SSAValue:
    """The buffer `value` is a view of (through subviews, reshapes and casts), or itself."""
    while isinstance(owner := value.owner, VIEWS):
        value = owner.operands[0]
    return value


def _defined_inside(value: SSAValue, loop: Operation) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(value, BlockArgument) else owner
    return op is not None and loop.is_ancestor(op)


def _only_read_in(loop: scf.ForOp, root: SSAValue) -> bool:
    """Whether every op in `loop` that touches `root`'s buffer only reads it or views it."""
    for op in loop.body.walk():
        touched = [v for v in op.operands if buffer_root(v) is root]
        if not touched or isinstance(op, VIEWS + READS):
            continue
        if isinstance(op, GenericOp) and all(v in op.inputs for v in touched):
            continue
        return False
    return True


def invariant_loop(op: Operation, b: SSAValue) -> scf.ForOp | None:
    """The outermost `scf.for` around `op` in which `b` is invariant (module docstring)."""
    root = buffer_root(b)
    found: scf.ForOp | None = None
    parent = op.parent_op()
    while isinstance(parent, scf.ForOp):
        if _defined_inside(b, parent) or not _only_read_in(parent, root):
            break
        if any(buffer_root(v) is root for v in parent.operands):
            break  # carried into the loop: written through the iteration argument
        found = parent
        parent = parent.parent_op()
    return found


def packed_before(mm: Matmul, tiles: MatmulTiles, threads: int) -> tuple[list[Operation], SSAValue]:
    """
    The ops that pack B's panels (`pack_b`, one batch: B is shared by every batch), its
    K and N read from B itself, and the packed buffer, to free after the loop.
    """
    b = Ops()
    k, n = (b.dim(mm.b, mm.dim_of(1, loop)) for loop in ("k", "j"))
    packed = pack_b(b, mm, (k, n), (b.index(1), []), tiles, threads)
    return b.ops, packed
