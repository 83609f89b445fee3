"""Which generics on memrefs `linalg-tile` runs as (batched) matmuls and implicit GEMMs."""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

from xdsl.dialects.linalg.ops import GenericOp

from mlc.ir import parse_module
from mlc.lowering.cpu.conv_gemm import conv_of
from mlc.lowering.linalg.contraction import matmul_of, zero_fill_before

MATMUL = "affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>"


def generics(source: str) -> list[GenericOp]:
    return [op for op in parse_module(source).walk() if isinstance(op, GenericOp)]


def matmul(
    body: str, extra: str = "", extra_type: str = "", fill: str = "0.0", between: str = ""
) -> str:
    ins = "%a, %b" + (", %x" if extra else "")
    types = "memref<5x12xf32>, memref<12x9xf32>" + (f", {extra_type}" if extra else "")
    maps = MATMUL + (f", {extra}" if extra else "") + ", affine_map<(d0, d1, d2) -> (d0, d2)>"
    args = "%e: f32, " if extra else ""
    return f"""
    func.func @f(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %x: memref<9xf32>, %c: memref<5x9xf32>) {{
      linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} outs(%c : memref<5x9xf32>) {{
      ^bb0(%z: f32):
        %v = arith.constant {fill} : f32
        linalg.yield %v : f32
      }}
      {between}
      linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "reduction", "parallel"]}} ins({ins} : {types}) outs(%c : memref<5x9xf32>) {{
      ^bb0(%u: f32, %w: f32, {args}%acc: f32):
        %p = arith.mulf %u, %w : f32
        %s = arith.addf %acc, %p : f32
        {body}
      }}
      func.return
    }}"""


EPILOGUE = """
        %last = arith.constant 11 : index
        %k = linalg.index 1 : index
        %is_last = arith.cmpi eq, %k, %last : index
        %r = scf.if %is_last -> (f32) {
          %t = arith.addf %s, %e : f32
          scf.yield %t : f32
        } else {
          scf.yield %s : f32
        }
        linalg.yield %r : f32"""


def test_plain_matmul_and_its_zero_fill():
    fill, op = generics(matmul("linalg.yield %s : f32"))
    mm = matmul_of(op)
    assert mm is not None and mm.batch == 0 and mm.epilogue is None
    assert mm.sizes == (5, 9, 12)
    assert zero_fill_before(op, mm.c) is fill


def test_zero_fill_found_across_ops_without_memory_effects():
    # ONNX Gemm: the bias's get_global sits between the fill and the matmul
    pure = "%g = memref.get_global @bias : memref<9xf32>\n      %i = arith.constant 3 : index"
    fill, op = generics(matmul("linalg.yield %s : f32", between=pure))
    mm = matmul_of(op)
    assert mm is not None and zero_fill_before(op, mm.c) is fill
    # a store between them may write C: the fill stays
    store = "%i = arith.constant 3 : index\n      memref.store %e0, %c[%i, %i] : memref<5x9xf32>"
    store = "%e0 = arith.constant 1.0 : f32\n      " + store
    _, op = generics(matmul("linalg.yield %s : f32", between=store))
    mm = matmul_of(op)
    assert mm is not None and zero_fill_before(op, mm.c) is None


def test_a_nonzero_fill_stays():
    _, op = generics(matmul("linalg.yield %s : f32", fill="1.0"))
    mm = matmul_of(op)
    assert mm is not None and zero_fill_before(op, mm.c) is None


def test_epilogue_on_the_last_k():
    bias = "affine_map<(d0, d1, d2) -> (d2)>"
    _, op = generics(matmul(EPILOGUE, bias, "memref<9xf32>"))
    mm = matmul_of(op)
    assert mm is not None and mm.epilogue is not None
    assert mm.epilogue.last == {1: 11}
    assert [str(m) for _, m in mm.epilogue.inputs.values()] == ["(d0, d1, d2) -> (d2)"]


def test_epilogue_on_another_iteration_is_refused():
    bias = "affine_map<(d0, d1, d2) -> (d2)>"
    _, op = generics(matmul(EPILOGUE.replace("constant 11", "constant 10"), bias, "memref<9xf32>"))
    assert matmul_of(op) is None


def test_not_a_multiply_add():
    _, op = generics(matmul("%m = arith.maximumf %s, %p : f32\n        linalg.yield %m : f32"))
    assert matmul_of(op) is None


CONV = """
func.func @conv(%x: memref<2x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x{o}x{o}xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 * {s} + d4, d6 * {s} + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}} ins(%x, %w : memref<2x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x{o}x{o}xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }}
  func.return
}}"""


def test_convolution_as_implicit_gemm():
    (op,) = generics(CONV.format(s=2, o=4))
    assert matmul_of(op) is None  # not a matmul's maps
    mm = conv_of(op)
    assert mm is not None and mm.image is not None
    assert mm.batch == 1 and mm.sizes == (4, 16, 27)
    assert (mm.image.prefix, mm.image.reductions, mm.image.spatial) == ((0,), (3, 4, 5), (2, 6))
    assert mm.image.row_stride() == 2  # a panel row is not contiguous
    (op,) = generics(CONV.format(s=1, o=7))
    mm = conv_of(op)
    assert mm is not None and mm.image is not None and mm.image.row_stride() == 1


def test_a_matmul_is_not_taken_for_a_convolution():
    _, op = generics(matmul("linalg.yield %s : f32"))
    assert conv_of(op) is None


def transposed(a_map: str, b_map: str, a_type: str, b_type: str) -> str:
    maps = f"affine_map<(d0, d1, d2) -> {a_map}>, affine_map<(d0, d1, d2) -> {b_map}>"
    return f"""
    func.func @f(%a: {a_type}, %b: {b_type}, %c: memref<5x9xf32>) {{
      linalg.generic {{indexing_maps = [{maps}, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}} ins(%a, %b : {a_type}, {b_type}) outs(%c : memref<5x9xf32>) {{
      ^bb0(%u: f32, %w: f32, %acc: f32):
        %p = arith.mulf %u, %w : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }}
      func.return
    }}"""


def test_transposed_operands_are_matmuls():
    # A^T (k, i) and B^T (j, k): the sizes come from the dims each loop reads
    (op,) = generics(transposed("(d1, d0)", "(d2, d1)", "memref<12x5xf32>", "memref<9x12xf32>"))
    mm = matmul_of(op)
    assert mm is not None and mm.transposed_b
    assert mm.sizes == (5, 9, 12)
    assert (mm.dim_of(0, "i"), mm.dim_of(0, "k"), mm.dim_of(1, "j")) == (1, 0, 0)
    (op,) = generics(transposed("(d0, d1)", "(d1, d2)", "memref<5x12xf32>", "memref<12x9xf32>"))
    assert (mm := matmul_of(op)) is not None and not mm.transposed_b


def test_layouts_the_kernel_cannot_pack_are_not_matmuls():
    # B reading i, or k twice: not a matmul the kernel can run
    for b_map in ("(d0, d1)", "(d1, d1)"):
        (op,) = generics(transposed("(d0, d1)", b_map, "memref<5x12xf32>", "memref<12x12xf32>"))
        assert matmul_of(op) is None
