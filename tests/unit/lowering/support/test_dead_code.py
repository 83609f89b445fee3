"""`dead_code.region_dce` keeps and erases exactly the ops xDSL's `region_dce` does."""

import pytest
from xdsl.traits import get_effects
from xdsl.transforms.dead_code_elimination import region_dce as xdsl_region_dce

from mlc.ir import parse_module, print_module
from mlc.lowering.support.dead_code import EffectCache, region_dce

# Dead and live ops at several loop depths: a dead nest of pure ops and loads, a nest
# that stores (live), an alloc in an otherwise dead loop, a call (unknown effects),
# a chain of dead ops feeding each other, and a dead `scf.if`.
PROGRAM = """
func.func private @opaque(index) -> index
func.func @f(%m: memref<8x8xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %unused = arith.addi %n, %c1 : index
  %chain = arith.muli %unused, %n : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %m[%i, %j] : memref<8x8xf32>
      %y = arith.addf %x, %x : f32
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %m[%i, %j] : memref<8x8xf32>
      %dead = arith.mulf %x, %x : f32
      %y = arith.addf %x, %x : f32
      memref.store %y, %m[%j, %i] : memref<8x8xf32>
    }
  }
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> (index) {
    %t = memref.alloc() : memref<4xf32>
    %k = arith.addi %acc, %i : index
    scf.yield %k : index
  }
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> (index) {
    %k = arith.addi %acc, %i : index
    scf.yield %k : index
  }
  %cond = arith.cmpi slt, %n, %c8 : index
  scf.if %cond {
    %z = arith.addi %n, %n : index
  }
  %called = func.call @opaque(%n) : (index) -> index
  %kept = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> (index) {
    %k = func.call @opaque(%acc) : (index) -> index
    scf.yield %k : index
  }
  func.return %r : index
}
"""


@pytest.mark.parametrize("program", [PROGRAM, PROGRAM.replace("%n, %c8", "%c1, %c8")])
def test_same_as_xdsl(program):
    ours, theirs = parse_module(program), parse_module(program)
    assert region_dce(ours.body) == xdsl_region_dce(theirs.body)
    assert print_module(ours) == print_module(theirs)
    text = print_module(ours)
    assert "arith.mulf" not in text  # dead inside a live loop
    assert "memref.store" in text
    assert "memref.alloc" in text  # an allocation whose memory is not its result: kept
    assert text.count("func.call") == 2  # unknown effects: kept although unused
    assert "scf.if" not in text and "%chain" not in text


# A graph region (the module's body) where uses come before definitions: each sweep,
# in reverse, passes over `%c` and `%y` before the call that makes them live is seen.
USED_BEFORE_DEFINED = """
func.call @opaque(%y) : (index) -> ()
%y = arith.addi %c, %c : index
%c = arith.constant 1 : index
%d = arith.constant 2 : index
"""


def _sweeps(monkeypatch, program: str) -> int:
    """How many sweeps `region_dce` makes of `program`'s module body."""
    from mlc.lowering.support import dead_code

    module, sweeps = parse_module(program), []
    original = dead_code._CachedLiveSet.propagate_region_liveness

    def counted(self, region):
        if region is module.body:
            sweeps.append(region)
        original(self, region)

    monkeypatch.setattr(dead_code._CachedLiveSet, "propagate_region_liveness", counted)
    region_dce(module.body)
    return len(sweeps)


def test_uses_before_definitions_take_more_sweeps(monkeypatch):
    ours, theirs = parse_module(USED_BEFORE_DEFINED), parse_module(USED_BEFORE_DEFINED)
    assert region_dce(ours.body) == xdsl_region_dce(theirs.body)
    assert print_module(ours) == print_module(theirs)
    assert "%d" not in print_module(ours) and "%c = arith.constant 1" in print_module(ours)
    assert _sweeps(monkeypatch, USED_BEFORE_DEFINED) == 3  # xDSL's makes four


def test_dominated_uses_take_one_sweep(monkeypatch):
    assert _sweeps(monkeypatch, PROGRAM) == 1  # xDSL's makes two


def test_nothing_to_erase():
    program = "func.func @g(%a: index) -> index {\n  func.return %a : index\n}\n"
    module = parse_module(program)
    assert not region_dce(module.body)
    assert print_module(module) == print_module(parse_module(program))


def test_effects_of_a_loop_are_its_body_s():
    module = parse_module(PROGRAM)
    cache = EffectCache()
    for op in module.walk():
        if op.name in ("scf.for", "scf.if", "memref.store", "func.call"):
            assert cache.effects(op) == get_effects(op), op.name


def test_dead_op_check_agrees_with_xdsl():
    """`DeadOpCheck` answers as xDSL's `is_trivially_dead` on every op, asked twice."""
    from xdsl.transforms.dead_code_elimination import is_trivially_dead

    from mlc.lowering.support.dead_code import DeadOpCheck

    module = parse_module(PROGRAM)
    check = DeadOpCheck()
    for _ in range(2):  # the second round answers from the per-class tables
        answers = [(op.name, check(op), is_trivially_dead(op)) for op in module.walk()]
        assert all(ours == theirs for _, ours, theirs in answers)
    assert any(ours for _, ours, _ in answers) and not all(ours for _, ours, _ in answers)
