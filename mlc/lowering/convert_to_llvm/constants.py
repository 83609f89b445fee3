"""
One `llvm.mlir.constant` per value and type in each function, at the top of its entry
block, instead of one per use.

Addresses of static layouts are sums of constant strides and offsets: made per use,
a fifth of ResNet-50's `llvm` ops were constants (11.4k of 54k), each built, swept,
translated and checked for deadness. LLVM IR has no constant instructions (a constant
is an operand), so sharing them changes nothing that LLVM sees; the entry block
dominates every block of its function, so each use stays valid. Scalar integer and
float constants are shared (`FloatAttr`s compare bits, so -0.0 and 0.0 stay apart);
vector constants are made where used.
"""

from dataclasses import dataclass, field

from xdsl.dialects import func, gpu, llvm
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

# Ops whose body region is a function body: its entry block dominates the rest.
FUNCTIONS = (func.FuncOp, llvm.FuncOp, gpu.FuncOp)


@dataclass
class FunctionConstants:
    """The constants made so far in one function body, inserted in first-use order."""

    entry: Block
    values: dict[tuple[Attribute, Attribute], SSAValue] = field(
        default_factory=dict[tuple[Attribute, Attribute], SSAValue]
    )
    last: Operation | None = None

    def get(self, value: IntegerAttr | FloatAttr, type_: Attribute) -> SSAValue:
        """The function's constant `value : type_`, made on first use."""
        key = (value, type_)
        if (known := self.values.get(key)) is not None:
            return known
        op = llvm.ConstantOp.create(result_types=[type_], properties={"value": value})
        if self.last is not None:
            self.entry.insert_op_after(op, self.last)
        elif (first := self.entry.first_op) is not None:
            self.entry.insert_op_before(op, first)
        else:
            self.entry.add_op(op)
        self.last = op
        self.values[key] = op.results[0]
        return op.results[0]


@dataclass
class ConstantPool:
    """The shared constants of every function of a module, found from an op inside it."""

    by_block: dict[Block, FunctionConstants | None] = field(
        default_factory=dict[Block, FunctionConstants | None]
    )
    by_entry: dict[Block, FunctionConstants] = field(default_factory=dict[Block, FunctionConstants])

    def of(self, op: Operation) -> FunctionConstants | None:
        """The constants of the function around `op`; None outside any function."""
        block = op.parent
        if not isinstance(block, Block):
            return None
        if block in self.by_block:
            return self.by_block[block]
        found = self._function_entry(block)
        constants = None
        if found is not None:
            constants = self.by_entry.setdefault(found, FunctionConstants(found))
        self.by_block[block] = constants
        return constants

    @staticmethod
    def _function_entry(block: Block) -> Block | None:
        """The entry block of the function body `block` lies in, however deep."""
        while True:
            region = block.parent
            owner = region.parent if region is not None else None
            if owner is None or region is None:
                return None
            if isinstance(owner, FUNCTIONS):
                return region.first_block
            parent = owner.parent
            if not isinstance(parent, Block):
                return None
            block = parent
