"""
NonZero on the GPU target: a mask's scan, the coordinates, the fill of the result and
one kernel of plain stores (`scatter_compaction`), with no winners' atomics and no
index-check reduction; the lowering's unread generics (the broadcast columns, the
ones an `arange` no longer sums) launch nothing (`dead_generics`).
"""

import numpy as np
import pytest
from xdsl.dialects import gpu, llvm, memref

import mlc
from mlc.pipeline import lower
from tests.e2e.onnx.test_onnx_data_sized import non_zero_model


def lowered(shape, dynamic: bool):
    module = mlc.import_onnx(non_zero_model(np.zeros(shape, np.float32), False, dynamic))
    lower(module, target="gpu", emit="gpu")
    return module


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_non_zero_kernels(dynamic):
    module = lowered((3, 5), dynamic)
    launches = [op for op in module.walk() if isinstance(op, gpu.LaunchFuncOp)]
    # the mask, the scan (its total too), the coordinates (their `arange` a count
    # fused in), the result's fill, the compaction, and the program's `+ 1`
    assert len(launches) == 6
    asm = [op.asm_string.data for op in module.walk() if isinstance(op, llvm.InlineAsmOp)]
    assert not any(text.startswith("red.max") for text in asm)  # no winners' table


def test_only_the_count_is_read_back():
    """The host reads the count (the result's size) and no index check's value."""
    module = lowered((4, 6), dynamic=True)
    main = next(op for op in module.ops if op.name == "func.func")
    loads = [op for op in main.walk() if isinstance(op, memref.LoadOp)]
    assert len(loads) == 1
