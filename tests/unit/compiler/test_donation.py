"""The pieces of `mlc.jit`'s donation that need no compile: pairing donated arguments
with results, the argument check, overlap detection, and the signature's aliases."""

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, TensorType, f32, f64
from xdsl.ir import Block, Region

from mlc.compiler.donation import _sharing_memory, check_argnums, mark_donated
from mlc.compiler.signature import Signature, buffer_types
from mlc.lowering.support.result_aliases import alias_errors, result_aliases


def function(inputs, outputs) -> func.FuncOp:
    body = Region(Block(arg_types=inputs))
    return func.FuncOp("f", FunctionType.from_lists(inputs, outputs), body)


def test_each_donated_argument_takes_the_first_free_result_of_its_type():
    a, b, s = TensorType(f32, [3]), TensorType(f64, [3]), TensorType(f32, [])
    f = function([a, a, s, b], [s, a, a, s])
    assert mark_donated(f, [0, 1, 2, 3]) == [3]  # no f64 result
    assert result_aliases(f) == {1: 0, 2: 1, 0: 2}
    assert alias_errors(f) == []


def test_check_argnums():
    assert check_argnums(2) == (2,)
    assert check_argnums((0, 3)) == (0, 3)
    for bad in [(1, 1), (-1,), (0.5,)]:
        with pytest.raises(TypeError, match="donate_argnums must be"):
            check_argnums(bad)


def test_sharing_memory_finds_every_overlap():
    base = np.zeros(100)
    wide, inside, after, apart = base[:50], base[10:20], base[40:70], np.zeros(4)
    assert _sharing_memory([wide, inside, apart]) == {0, 1}
    assert _sharing_memory([inside, after, wide]) == {0, 1, 2}  # both inside the widest
    assert _sharing_memory([wide, base[50:], apart, np.zeros(0)]) == set()  # touching only


def test_signature_keeps_aliases_and_drops_aliased_results_once_bufferized():
    a, s = TensorType(f32, [3]), TensorType(f32, [])
    f = function([a, a], [a, s])
    mark_donated(f, [1])
    signature = Signature.of(f)
    assert signature.aliases == ((0, 1),)
    assert Signature.from_json(signature.to_json()) == signature
    assert buffer_types([signature])["f"] == FunctionType.from_lists(
        [MemRefType(f32, [3])] * 2, [MemRefType(f32, [])]
    )
