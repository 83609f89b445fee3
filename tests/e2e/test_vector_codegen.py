"""
The micro-kernel becomes FMA code on the widest vectors: checked in the assembly LLVM
emits for an AVX-512 (Zen 4) and an AVX2 (Zen 3) target, whatever the host is.
"""

import llvmlite.binding as llvm
import pytest

from mlc import pipeline
from mlc.backend.jit import host_features, optimize, parse_and_verify
from mlc.backend.llvm import to_llvm_ir
from mlc.ir import parse_module

MATMUL = """
func.func @f(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                   affine_map<(d0, d1, d2) -> (d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
"""


def assembly(lanes: int, cpu: str, features: dict[str, bool]) -> str:
    module = parse_module(MATMUL)
    spec = f"linalg-tile{{vector-length={lanes}}},convert-linalg-to-loops,canonicalize,cse"
    pipeline.run_pipeline(module, spec + ",convert-to-llvm")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=cpu, features=host_features(cpu, features), opt=3)
    ir = parse_and_verify(to_llvm_ir(module))
    optimize(ir, machine)
    return machine.emit_assembly(ir)


def test_host_features_lift_the_256_bit_cap_on_amd_avx512():
    assert host_features("znver4", {"avx512f": True, "avx2": True}).endswith("-prefer-256-bit")
    assert "prefer-256-bit" not in host_features("znver3", {"avx512f": False, "avx2": True})
    assert "prefer-256-bit" not in host_features("sapphirerapids", {"avx512f": True})


@pytest.mark.skipif(not llvm.get_default_triple().startswith("x86_64"), reason="x86 only")
@pytest.mark.parametrize(
    ("lanes", "cpu", "features", "register"),
    [
        (16, "znver4", {"avx512f": True, "avx512vl": True, "avx2": True, "fma": True}, "zmm"),
        (8, "znver3", {"avx2": True, "fma": True, "avx512f": False}, "ymm"),
    ],
)
def test_micro_kernel_is_vector_fma(lanes: int, cpu: str, features: dict[str, bool], register: str):
    text = assembly(lanes, cpu, features)
    fmas = [line for line in text.splitlines() if "vfmadd" in line]
    assert fmas, "no FMA instructions in the kernel"
    assert all(register in line for line in fmas)
