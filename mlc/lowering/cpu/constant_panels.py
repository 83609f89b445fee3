"""
The B panels of a matmul whose B is a model weight, packed once, at compile time.

`matmul_nest` packs B into NR-wide panels on every call (`pack_b`): for a 64-row batch
through a 1024 x 1024 layer that copy is a third of the call. When B is a weight, a
`dense_resource` constant read without batch loops,

    %w = memref.get_global @__resource_fc1.weight_<digest> : memref<1024x784xf32>

its panels are the same on every call, so they are packed here, in numpy, into a new
resource `<handle>.panels<NR>` with a global of its own,

    Bp[0, p, k, jj] = B[k, p*NR + jj]     (B[p*NR + jj, k] when read transposed; 0 past N)

and the kernel reads them in place: what onnxruntime's prepacked weights do. Narrow
weights (f16) are packed widened to f32, the kernel's accumulator type. The data
comes from `mlc.resources`; a resource this process does not hold (IR parsed from
text) keeps the packing at run time.
"""

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, StringAttr, UnitAttr
from xdsl.ir import Operation
from xdsl.ir.affine import AffineDimExpr

from mlc import resources
from mlc.lowering.linalg.contraction import Matmul

ALIGNMENT = 64


def constant_weight(mm: Matmul) -> np.ndarray | None:
    """B's data as a K x N array, if B is a stored constant read at `(k, j)` or `(j, k)`."""
    source = mm.b.owner
    if mm.image is not None or not isinstance(source, memref.GetGlobalOp):
        return None
    k, j = (AffineDimExpr(mm.batch + d) for d in (1, 2))
    if mm.maps[1].results not in ((k, j), (j, k)):
        return None  # batched or broadcast: packed per call
    name = source.name_.root_reference.data
    if not name.startswith(resources.PREFIX):
        return None
    data = resources.lookup(name.removeprefix(resources.PREFIX))
    if data is None or data.ndim != 2:
        return None
    return data.T if mm.transposed_b else data


def pack_panels(weight: np.ndarray, nr: int) -> np.ndarray:
    """`Bp[0, p, k, jj] = weight[k, p*NR + jj]`, zero past N, as `pack_b` lays it out."""
    k, n = weight.shape
    panels = -(-n // nr)
    padded = np.zeros((k, panels * nr), dtype=weight.dtype)
    padded[:, :n] = weight
    return np.ascontiguousarray(padded.reshape(k, panels, nr).transpose(1, 0, 2)[None])


def constant_panels(mm: Matmul, nr: int) -> memref.GlobalOp | None:
    """The global of B's packed panels (module docstring), or None to pack per call."""
    if (weight := constant_weight(mm)) is None:
        return None
    source = mm.b.owner
    assert isinstance(source, memref.GetGlobalOp)
    stem = source.name_.root_reference.data.removeprefix(resources.PREFIX)
    packed = pack_panels(weight, nr).astype(np.float32 if mm.narrow else weight.dtype)
    handle = resources.register(packed, f"{stem}.panels{nr}")
    type_ = MemRefType(mm.accumulator, packed.shape)
    name = StringAttr(resources.symbol_name(handle))
    return memref.GlobalOp.get(name, type_, UnitAttr(), StringAttr("public"), UnitAttr(), ALIGNMENT)


def get_panels(panels: memref.GlobalOp) -> Operation:
    """A `memref.get_global` of the panels' global."""
    type_ = panels.type
    assert isinstance(type_, MemRefType)
    return memref.GetGlobalOp(panels.sym_name.data, type_)
