"""
The LSTM's gate columns in blocks of hidden units, so that a step is one pass.

ONNX orders the rows of W, R and B gate by gate (i, o, f, c; `hidden` rows each), so
the step's product `xt + h @ R^T` holds each gate in its own quarter of the columns, and
the gates of one hidden unit lie `hidden` columns apart. When the weights are constants
their rows are permuted once, at import, into blocks of U hidden units with the
four gates side by side:

    columns [p * 4U, (p + 1) * 4U) = i, o, f, c of hidden units [p * U, (p + 1) * U)

(U: `units`, the largest of `UNITS` that divides `hidden`)

and the step reads gate k as the block view `z[b, p, k, u]` (`gate`), with the states
viewed the same way (`blocked`, free reshapes). A block of 4U columns is whole register
panels of the CPU matmul kernel (32 columns with AVX-512), so the thread that finishes a
group of panels that is whole blocks has every gate of their hidden units: `linalg-tile`
then runs the gates there, in the same parallel task as the product
(`mlc.lowering.cpu.panel_consumers`).
"""

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.ops.padding import INT64_MAX

# Hidden units per block, the most of these that divides `hidden`: four f32 gates of 8
# units fill one 32-wide AVX-512 register panel, but the gates' loops vectorise over a
# block's units, and 8 is too short a loop for LLVM to (the step ran 2.2x slower).
UNITS = (64, 32)


@dataclass(frozen=True)
class GateBlocks:
    """The blocked layout of a `[batch, gates * hidden]` step product (module docstring)."""

    gates: int
    hidden: int
    batch: int

    @staticmethod
    def fits(hidden: int, batch: object) -> bool:
        """Whole blocks, and a static batch of several rows (one row is a matrix-vector
        product, which keeps ONNX's order)."""
        return hidden % UNITS[-1] == 0 and isinstance(batch, int) and batch > 1

    @property
    def units(self) -> int:
        return next(u for u in UNITS if self.hidden % u == 0)

    @property
    def blocks(self) -> int:
        return self.hidden // self.units

    def order(self) -> np.ndarray:
        """Row `r` of the permuted W, R or B is row `order()[r]` of ONNX's."""
        gate, block, unit = np.meshgrid(
            np.arange(self.gates), np.arange(self.blocks), np.arange(self.units), indexing="ij"
        )
        rows = gate * self.hidden + block * self.units + unit  # [gates, blocks, units]
        return rows.transpose(1, 0, 2).reshape(-1)

    def blocked(self, b, x: SSAValue) -> SSAValue:
        """A state `[batch, hidden]` (or a vector `[hidden]`) as `[..., blocks, 1, units]`."""
        lead = [self.batch] if len(x.type.get_shape()) == 2 else []  # pyright: ignore[reportAttributeAccessIssue]
        return b(ml.ReshapeOp(x, [*lead, self.blocks, 1, self.units]))

    def merged(self, b, x: SSAValue) -> SSAValue:
        """A blocked state back as `[batch, hidden]`."""
        return b(ml.ReshapeOp(x, [self.batch, self.hidden]))

    def gate(self, b, z: SSAValue, k: int) -> SSAValue:
        """Gate `k` of the permuted product `z`, as `[batch, blocks, 1, units]`."""
        grouped = b(ml.ReshapeOp(z, [self.batch, self.blocks, self.gates, self.units]))
        ends = [INT64_MAX, INT64_MAX, k + 1, INT64_MAX]
        return b(ml.SliceOp(grouped, [0, 0, k, 0], ends, [1, 1, 1, 1]))
