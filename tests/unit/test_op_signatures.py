"""
Verification by signature (`mlc.op_signatures`): a module verifies to the same
diagnostics as op by op, whatever repeats, and what depends on an op's place (an
erased operand, a block's end) is still checked on every op.
"""

import pytest
from xdsl.dialects import llvm, memref
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from mlc import diagnostics
from mlc.ir import parse_module
from mlc.op_signatures import SignatureVerifier, _context_free

VALID = """
llvm.func @f(%a: i32, %b: i32, %p: !llvm.ptr, %v: vector<4xf32>) -> i32 {
  %0 = llvm.add %a, %b : i32
  %1 = llvm.add %0, %b : i32
  %2 = llvm.getelementptr %p[1] : (!llvm.ptr) -> !llvm.ptr, f32
  %3 = llvm.getelementptr %2[1] : (!llvm.ptr) -> !llvm.ptr, f32
  %4 = llvm.shufflevector %v, %v [0, 1, 2, 3] : vector<4xf32>
  %5 = llvm.shufflevector %v, %v [3, 2, 1, 0] : vector<4xf32>
  llvm.return %1 : i32
}
"""


def rendered(module: Operation, verifier: bool) -> list[str]:
    if verifier:
        return [d.render() for d in diagnostics.verify_module(module)]
    return [d.render() for op in module.walk() if (d := diagnostics.verify_op(op)) is not None]


def test_a_valid_module_verifies_and_each_signature_is_checked_once(monkeypatch):
    module = parse_module(VALID)
    checked: list[str] = []
    real = Operation.verify

    def counted(op: Operation, verify_nested_ops: bool = True) -> None:
        checked.append(op.name)
        real(op, verify_nested_ops)

    monkeypatch.setattr(Operation, "verify", counted)
    verifier = SignatureVerifier()
    for op in module.walk():
        verifier.verify(op)
    assert checked.count("llvm.add") == 1  # one signature, (i32, i32) -> i32, twice
    assert checked.count("llvm.getelementptr") == 1
    assert checked.count("llvm.shufflevector") == 2  # two masks


@pytest.mark.parametrize(
    "bad",
    [
        # a mask index past the operands, after a valid shuffle of the same types
        ("[3, 2, 1, 0]", "[9, 2, 1, 0]"),
        # a GEP into a scalar, after a valid GEP of the same operand and result types
        ("%3 = llvm.getelementptr %2[1] :", "%3 = llvm.getelementptr %2[1, 0] :"),
    ],
)
def test_an_invalid_op_after_valid_ones_of_its_class_is_reported(bad):
    module = parse_module(VALID.replace(*bad))
    found = rendered(module, verifier=True)
    assert found and found == rendered(module, verifier=False)


def test_an_op_that_ends_a_block_is_checked_although_its_signature_verified():
    module = parse_module(VALID.replace("  llvm.return %1 : i32\n", ""))
    found = rendered(module, verifier=True)
    assert found == rendered(module, verifier=False)
    assert len(found) == 1 and "not a terminator" in found[0]


def test_an_erased_operand_is_found_on_a_known_signature():
    module = parse_module(VALID)
    adds = [op for op in module.walk() if isinstance(op, llvm.AddOp)]
    verifier = SignatureVerifier()
    verifier.verify(adds[0])
    adds[0].detach()
    adds[0].erase(safe_erase=False)
    with pytest.raises(ValueError, match="Erased SSA value"):
        verifier.verify(adds[1])


def test_ops_whose_verifiers_read_more_than_their_signature_are_verified_each_time():
    assert _context_free(llvm.AddOp) and _context_free(llvm.GEPOp)
    assert not _context_free(llvm.ReturnOp)  # a terminator: where it sits matters
    assert not _context_free(llvm.FuncOp)  # regions
    assert not _context_free(memref.SubviewOp)  # a verifier of its own, not in the list


def test_a_signature_that_failed_is_never_remembered():
    module = parse_module(VALID.replace("[3, 2, 1, 0]", "[9, 2, 1, 0]"))
    verifier = SignatureVerifier()
    shuffles = [op for op in module.walk() if isinstance(op, llvm.ShuffleVectorOp)]
    verifier.verify(shuffles[0])
    for _ in range(2):
        with pytest.raises(VerifyException):
            verifier.verify(shuffles[1])
