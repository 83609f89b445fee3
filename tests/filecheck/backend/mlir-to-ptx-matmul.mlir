// RUN: mlc-translate --mlir-to-ptx %s | filecheck %s
// RUN: mlc-translate --mlir-to-ptx --sm sm_80 %s | filecheck %s
// RUN: mlc-translate --mlir-to-ptx --sm sm_80 %s | filecheck %s --check-prefix=ASYNC
// RUN: mlc-translate --mlir-to-ptx --sm sm_75 %s | filecheck %s --check-prefix=OLD

// A matmul with a bias + relu epilogue is one tiled kernel: two shared-memory tiles
// (`.shared`: A's transposed, 132 floats a row; B's 136), one barrier per K slice,
// 16-byte shared loads feeding 512 fma per slice (8x8 outputs, 8 deep), then the
// epilogue per output. The K loop comes twice: with 16-byte global loads
// (`ld.global.v4`, taken at run time when the buffers are aligned) and without. The
// bias and relu are no kernels of their own (epilogue fusion needs a static K), nor is
// the zero fill of the output: the accumulators start at zero. The second kernel is
// the 64x64-tile variant (8x4 outputs a thread, two groups of threads sharing each
// 16-deep slice, 256 fma each, their sums added through a third shared buffer) that the
// host launches instead when 128x128 tiles would leave SMs idle; its aligned version
// copies slices into three shared buffers with `cp.async` (16 bytes a copy, two slices
// ahead: `wait_group 1` before each slice's barrier); for sm_75, which has no
// `cp.async`, its slices pass through registers instead. The bias has the
// matmul's static column count: a bias of an unrelated dynamic size would need a
// run-time broadcast check and stay a kernel of its own. Both kernels carry their
// block size as a launch bound (`.maxntid`).

// CHECK:       .visible .entry main_kernel_0(
// CHECK:       .maxntid 256, 1, 1
// CHECK-NOT:   .minnctapersm
// CHECK:         .shared .align {{[0-9]+}} .b8 __mlc_shared_0[8448];
// CHECK:         .shared .align {{[0-9]+}} .b8 __mlc_shared_1[8704];
// CHECK:         st.shared.b32
// CHECK:         bar.sync
// CHECK:         ld.shared.v4.{{[bf]}}32
// CHECK-COUNT-512: fma.rn.f32
// CHECK:         ld.global.v4.{{[bf]}}32
// CHECK:         bar.sync
// CHECK-COUNT-512: fma.rn.f32
// CHECK:         max.NaN.f32
// CHECK:       .visible .entry main_kernel_1(
// CHECK:       .maxntid 256, 1, 1
// CHECK:         .shared .align {{[0-9]+}} .b8 __mlc_shared_{{[0-9]+}}[15360];
// CHECK:         .shared .align {{[0-9]+}} .b8 __mlc_shared_{{[0-9]+}}[13824];
// CHECK:         .shared .align {{[0-9]+}} .b8 __mlc_shared_{{[0-9]+}}[16384];
// CHECK:         bar.sync
// CHECK:         ld.shared.v4.{{[bf]}}32
// CHECK-COUNT-256: fma.rn.f32
// CHECK:         max.NaN.f32
// ASYNC-LABEL: .visible .entry main_kernel_1(
// ASYNC-DAG:     cp.async.cg.shared.global [sa], [ga], 16, %r{{[0-9]+}};
// ASYNC-DAG:     cp.async.commit_group;
// ASYNC-DAG:     cp.async.wait_group 1;
// ASYNC-DAG:     cp.async.wait_group 0;
// CHECK-NOT:   .entry
// OLD:         .target sm_75
// OLD-NOT:     cp.async
// OLD:         .visible .entry main_kernel_1(
// OLD:           .shared .align {{[0-9]+}} .b8 __mlc_shared_{{[0-9]+}}[8704];
// OLD:           .shared .align {{[0-9]+}} .b8 __mlc_shared_{{[0-9]+}}[9216];
// OLD-NOT:     cp.async
func.func @main(%a: tensor<?x64xf32>, %b: tensor<64x96xf32>, %bias: tensor<96xf32>) -> tensor<?x96xf32> {
  %m = ml.matmul %a, %b : (tensor<?x64xf32>, tensor<64x96xf32>) -> tensor<?x96xf32>
  %s = ml.add %m, %bias : (tensor<?x96xf32>, tensor<96xf32>) -> tensor<?x96xf32>
  %r = ml.relu %s : (tensor<?x96xf32>) -> tensor<?x96xf32>
  func.return %r : tensor<?x96xf32>
}
