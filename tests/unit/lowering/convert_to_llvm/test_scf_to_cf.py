"""`convert_scf_to_cf` makes exactly the IR of xDSL's `convert-scf-to-cf` pass."""

from xdsl.context import Context
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

from mlc.ir import parse_module, print_module
from mlc.lowering.convert_to_llvm.scf_to_cf import convert_scf_to_cf

NESTED = """
func.func @f(%n: index, %c: i1, %x: f32) -> f32 {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %zero to %n step %one iter_args(%acc = %x) -> (f32) {
    %s = scf.if %c -> (f32) {
      %t = scf.for %j = %zero to %i step %one iter_args(%a = %acc) -> (f32) {
        %b = arith.addf %a, %a : f32
        scf.yield %b : f32
      }
      scf.yield %t : f32
    } else {
      %w = scf.index_switch %i -> f32
      case 2 {
        %m = arith.mulf %acc, %acc : f32
        scf.yield %m : f32
      }
      default {
        scf.yield %acc : f32
      }
      scf.yield %w : f32
    }
    scf.if %c {
      %u = arith.subf %s, %x : f32
    }
    scf.yield %s : f32
  }
  func.return %r : f32
}
func.func @g(%n: index) {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  scf.for %i = %zero to %n step %one {
    scf.for %j = %i to %n step %one {
    }
  }
  func.return
}
"""


def test_same_ir_as_xdsl_pass():
    ours, theirs = parse_module(NESTED), parse_module(NESTED)
    convert_scf_to_cf(ours)
    ConvertScfToCf().apply(Context(), theirs)
    assert print_module(ours) == print_module(theirs)
    assert "scf." not in print_module(ours).replace("scf.yield", "")
    assert not ours.verify()
