"""
Warp shuffles of any scalar a lane holds: what the warp reductions and scans exchange.

PTX's `shfl.sync` moves 32 bits (the NVVM intrinsics `llvm.nvvm.shfl.sync.<mode>.f32`
and `.i32`; xDSL 0.74 has no `gpu.shuffle`). A narrower integer (or a half float's bits)
travels zero-extended in an i32; a 64-bit value (i64, or an f64's bits) as its two
halves, two shuffles. The modes: `bfly` (lane `l ^ offset`, a butterfly), `up` (lane
`l - offset`, a lane below `offset` keeping its own value), `idx` (lane `offset`).
Built under the caller's implicit builder.
"""

from collections.abc import Callable

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, IntegerType, f32, i32, i64
from xdsl.ir import Attribute, SSAValue

from mlc.gpu_architectures import WARP

# The `c` operand of `shfl.sync`: the lane bound (31) for bfly and idx, the segment's
# first lane (0) for up, each for a whole warp.
CLAMPS = {"bfly": WARP - 1, "idx": WARP - 1, "up": 0}


def shuffles(element: Attribute) -> bool:
    """Whether `shuffle` can move a value of `element`: a float of 16, 32 or 64 bits or
    an integer of at most 64."""
    if isinstance(element, IntegerType):
        return element.width.data <= 64
    return isinstance(element, AnyFloat) and element.bitwidth in (16, 32, 64)


def i32_constant(value: int) -> SSAValue:
    return llvm.ConstantOp(IntegerAttr(value, i32), i32).result


def shuffle(
    value: SSAValue,
    mode: str,
    offset: SSAValue,
    lanes: SSAValue | None = None,
    clamp: SSAValue | None = None,
) -> SSAValue:
    """`value` as lane `mode`/`offset` holds it (module docstring); `lanes`: the lanes
    that take part (all the warp's when None); `clamp`: the `c` operand, where the
    caller made it once for many shuffles (`CLAMPS[mode]` when None)."""
    mask = lanes if lanes is not None else i32_constant(-1)
    clamp = clamp if clamp is not None else i32_constant(CLAMPS[mode])

    def move(word: SSAValue) -> SSAValue:
        kind = "f32" if word.type == f32 else "i32"
        args = [mask, word, offset, clamp]
        name = f"llvm.nvvm.shfl.sync.{mode}.{kind}"
        return llvm.CallIntrinsicOp(name, args, [word.type]).results[0]

    element = value.type
    if element in (f32, i32):
        return move(value)
    if isinstance(element, AnyFloat):
        bits = IntegerType(element.bitwidth)
        moved = _move_integer(arith.BitcastOp(value, bits).result, move)
        return arith.BitcastOp(moved, element).result
    assert isinstance(element, IntegerType)
    return _move_integer(value, move)


def _move_integer(value: SSAValue, move: Callable[[SSAValue], SSAValue]) -> SSAValue:
    """An integer of at most 64 bits through 32-bit shuffles."""
    element = value.type
    assert isinstance(element, IntegerType)
    width = element.width.data
    if width == 32:
        return move(value)
    if width < 32:
        return arith.TruncIOp(move(arith.ExtUIOp(value, i32).result), element).result
    assert width == 64
    low = move(arith.TruncIOp(value, i32).result)
    shift = arith.ConstantOp(IntegerAttr(32, i64)).result
    high = move(arith.TruncIOp(arith.ShRUIOp(value, shift).result, i32).result)
    wide_high = arith.ShLIOp(arith.ExtUIOp(high, i64).result, shift).result
    return arith.OrIOp(arith.ExtUIOp(low, i64).result, wide_high).result
