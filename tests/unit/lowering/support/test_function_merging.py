"""
`function_merging`: functions equal up to their names merge (repeatedly, so callers of
merged copies merge in turn), references are redirected, and functions that differ in
a constant, an attribute or a type stay apart.
"""

from xdsl.dialects import func

from mlc.ir import parse_module, print_module
from mlc.lowering.support import function_merging

CHAIN = """
func.func @main(%x: f32) -> f32 {
  %a = func.call @outer_a(%x) : (f32) -> f32
  %b = func.call @outer_b(%a) : (f32) -> f32
  %c = func.call @inner_b(%b) : (f32) -> f32
  func.return %c : f32
}
func.func private @inner_a(%v: f32) -> f32 {
  %two = arith.constant 2.0 : f32
  %r = arith.mulf %v, %two : f32
  func.return %r : f32
}
func.func private @inner_b(%w: f32) -> f32 {
  %k = arith.constant 2.0 : f32
  %s = arith.mulf %w, %k : f32
  func.return %s : f32
}
func.func private @outer_a(%v: f32) -> f32 {
  %r = func.call @inner_a(%v) : (f32) -> f32
  func.return %r : f32
}
func.func private @outer_b(%v: f32) -> f32 {
  %r = func.call @inner_b(%v) : (f32) -> f32
  func.return %r : f32
}
"""


def _private(op) -> bool:
    return isinstance(op, func.FuncOp) and op.sym_visibility is not None


def _names(module) -> list[str]:
    return [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]


def test_callers_of_merged_copies_merge_in_turn():
    module = parse_module(CHAIN)
    merged = function_merging.merge(module, module, _private)
    assert merged == {"inner_b": "inner_a", "outer_b": "outer_a"}
    assert _names(module) == ["main", "inner_a", "outer_a"]
    text = print_module(module)
    assert "@inner_b" not in text and "@outer_b" not in text
    assert text.count("func.call @outer_a") == 2 and text.count("func.call @inner_a") == 2
    assert not module.verify()


def test_functions_differing_in_constant_attribute_or_type_stay_apart():
    module = parse_module("""
func.func private @base(%v: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %r = arith.addf %v, %c : f32
  func.return %r : f32
}
func.func private @constant(%v: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %r = arith.addf %v, %c : f32
  func.return %r : f32
}
func.func private @attribute(%v: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %r = arith.addf %v, %c fastmath<fast> : f32
  func.return %r : f32
}
func.func private @type(%v: f64) -> f64 {
  %c = arith.constant 2.0 : f64
  %r = arith.addf %v, %c : f64
  func.return %r : f64
}
func.func private @function_attribute(%v: f32) -> f32 attributes {llvm.emit_c_interface} {
  %c = arith.constant 2.0 : f32
  %r = arith.addf %v, %c : f32
  func.return %r : f32
}
func.func private @declaration(%v: f32) -> f32
func.func private @declaration_too(%v: f32) -> f32
""")
    assert function_merging.merge(module, module, _private) == {}
    assert len(_names(module)) == 7


def test_kinds_groups_by_first_of_each_kind():
    module = parse_module(CHAIN)
    functions = [op for op in module.ops if _private(op)]
    assert function_merging.kinds(functions) == {"inner_b": "inner_a"}


def test_rename_references_follows_nested_symbol_paths():
    segments = "array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>"
    operand_types = "(index, index, index, index, index, index, memref<4xf32>) -> ()"
    module = parse_module(f"""
builtin.module attributes {{gpu.container_module}} {{
  func.func @f(%a: memref<4xf32>) {{
    %c1 = arith.constant 1 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %a)
        <{{kernel = @kernels::@k1, operandSegmentSizes = {segments}}}> : {operand_types}
    func.return
  }}
}}
""")
    changed = function_merging.rename_references(module, {("kernels", "k1"): ("kernels", "k0")})
    assert [op.name for op in changed] == ["gpu.launch_func"]
    assert "@kernels::@k0" in print_module(module)


SHAPES_AND_USES = """
func.func private @alloc_4() {
  %m = memref.alloc() : memref<4xf32>
  memref.dealloc %m : memref<4xf32>
  func.return
}
func.func private @alloc_8() {
  %m = memref.alloc() : memref<8xf32>
  memref.dealloc %m : memref<8xf32>
  func.return
}
func.func private @sub_xy(%x: f32, %y: f32) -> f32 {
  %r = arith.subf %x, %y : f32
  func.return %r : f32
}
func.func private @sub_yx(%x: f32, %y: f32) -> f32 {
  %r = arith.subf %y, %x : f32
  func.return %r : f32
}
func.func private @sub_again(%a: f32, %b: f32) -> f32 {
  %t = arith.subf %a, %b : f32
  func.return %t : f32
}
func.func private @branches(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  func.return
^bb2:
  func.return
}
func.func private @branches_swapped(%c: i1) {
  cf.cond_br %c, ^bb2, ^bb1
^bb1:
  func.return
^bb2:
  func.return
}
"""


def test_structure_tells_apart_result_types_operand_order_and_successors():
    module = parse_module(SHAPES_AND_USES)
    merged = function_merging.merge(module, module, _private)
    # Equal up to SSA names only: different allocation shapes (a result type, which
    # xDSL's `is_structurally_equivalent` does not compare), operand order or branch
    # targets keep functions apart.
    assert merged == {"sub_again": "sub_xy"}
    bodies = {op.sym_name.data: op.body for op in module.ops if isinstance(op, func.FuncOp)}
    key = function_merging.structure
    assert key(bodies["alloc_4"]) != key(bodies["alloc_8"])
    assert key(bodies["branches"]) != key(bodies["branches_swapped"])
