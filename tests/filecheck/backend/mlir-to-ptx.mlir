// RUN: mlc-translate --mlir-to-ptx %s | filecheck %s
// RUN: mlc-translate --mlir-to-ptx --sm sm_80 %s | filecheck %s --check-prefix=SM80
// RUN: not mlc-translate --mlir-to-ptx --sm sm_12 %s 2>&1 | filecheck %s --check-prefix=BAD
// RUN: mlc-opt %s -p convert-ml-to-linalg | mlc-translate --mlir-to-ptx - | filecheck %s --check-prefix=LINALG

// The gpu pipeline from the ml level to PTX: one entry point per kernel, loads and
// stores in the global space, coalesced by the flattened 1-D mapping. From the ml
// level, add and relu fuse into one kernel; from linalg too, since the gpu pipeline's
// parallel-loops stage runs linalg-fuse-elementwise again (for epilogues).

// CHECK:       .version 8.0
// CHECK-NEXT:  .target sm_90
// CHECK:       .visible .entry main_kernel_0(
// CHECK:         mov.u32 {{.*}}%tid.x;
// CHECK:         ld.global.{{.*}}
// CHECK:         add.rn.f32
// CHECK:         max.NaN.f32
// CHECK:         st.global.{{.*}}
// CHECK-NOT:   .entry
// LINALG:      .visible .entry main_kernel_0(
// LINALG:        add.rn.f32
// LINALG:        max.NaN.f32
// LINALG-NOT:  .entry
// SM80:        .target sm_80
// BAD:         invalid choice: 'sm_12'
func.func @main(%x: tensor<?x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %s = ml.add %x, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = ml.relu %s : (tensor<?x16xf32>) -> tensor<?x16xf32>
  func.return %r : tensor<?x16xf32>
}
