// RUN: mlc-translate --mlir-to-ptx %s | filecheck %s
// RUN: mlc-translate --mlir-to-ptx --sm sm_80 %s | filecheck %s --check-prefix=SM80
// RUN: not mlc-translate --mlir-to-ptx --sm sm_12 %s 2>&1 | filecheck %s --check-prefix=BAD
// RUN: mlc-opt %s -p convert-ml-to-linalg | mlc-translate --mlir-to-ptx - | filecheck %s --check-prefix=UNFUSED

// The gpu pipeline from the ml level to PTX: one entry point per kernel, loads and
// stores in the global space, coalesced by the flattened 1-D mapping. From the ml
// level, add and relu fuse into one kernel; from linalg (fusion is a linalg-stage
// pass, already behind that input) they stay two.

// CHECK:       .version 8.0
// CHECK-NEXT:  .target sm_90
// CHECK:       .visible .entry main_kernel_0(
// CHECK:         mov.u32 {{.*}}%tid.x;
// CHECK:         ld.global.{{.*}}
// CHECK:         add.rn.f32
// CHECK:         max.NaN.f32
// CHECK:         st.global.{{.*}}
// CHECK-NOT:   .entry
// UNFUSED:     .visible .entry main_kernel_0(
// UNFUSED:       add.rn.f32
// UNFUSED:     .visible .entry main_kernel_1(
// UNFUSED:       max.NaN.f32
// SM80:        .target sm_80
// BAD:         invalid choice: 'sm_12'
func.func @main(%x: tensor<?x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %s = ml.add %x, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = ml.relu %s : (tensor<?x16xf32>) -> tensor<?x16xf32>
  func.return %r : tensor<?x16xf32>
}
