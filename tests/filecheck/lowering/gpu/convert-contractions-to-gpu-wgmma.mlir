// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto wgmma-tma=false}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto wgmma-tile=64,128,3 wgmma-tma=false}' | filecheck %s --check-prefix=SMALL
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=off}' | filecheck %s --check-prefix=OFF

// With `wgmma=auto` on sm_90, a 16-bit matmul of static sizes, multiples of 8, becomes
// the wgmma kernel: 2 warpgroups (256 threads) a 128x256 tile, dynamic shared memory
// for 4 stages of 64-deep slices of A and B (4 x 384 x 64 x 2 bytes + 1024 to align),
// cp.async copies, then per slice: fence.proxy.async, a barrier, wgmma.fence, 4 wgmmas
// (A K-major: transpose flag 0; a row-major B is N-major: 1), a commit and a wait for
// all but the last group; a lane's two adjacent outputs are rounded (and finished
// through a fused epilogue) and stored as one 32-bit word. `wgmma-tile` sets rows, columns and stages. With `wgmma=off`,
// or below sm_90, the mma.sync kernel takes it; what is declined, and why, is
// convert-contractions-to-gpu-wgmma-declined.mlir.

// CHECK-LABEL: func.func @matmul_bf16
// CHECK:         arith.constant 197632 : i32
// CHECK:         gpu.launch
// CHECK:         gpu.grid_dim
// CHECK:         memref.alloca() {mlc.dynamic_shared} : memref<98816xbf16, 3 : i64>
// CHECK:         cp.async.cg.shared.global
// CHECK:         cp.async.commit_group;
// CHECK:         scf.for
// CHECK:         cp.async.wait_group 1;
// CHECK:         fence.proxy.async.shared::cta;
// CHECK:         gpu.barrier
// CHECK:         wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {$0, {{.*}}, $127}, $256, $257, p, 1, 1, 0, 1; }"
// CHECK:         wgmma.commit_group.sync.aligned;
// CHECK:         wgmma.wait_group.sync.aligned 1;
// CHECK:         scf.yield
// CHECK:         wgmma.wait_group.sync.aligned 0;
// CHECK:         cp.async.wait_group 0;
// CHECK:         cvt.rn.bf16x2.f32 $0, $1, $2;
// CHECK:         st.global.b32 [ga], $1; }"
// CHECK-NOT:     mma.sync

// SMALL-LABEL: func.func @matmul_bf16
// SMALL:         arith.constant 74752 : i32
// SMALL:         cp.async.wait_group 0;
// SMALL:         wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, $128, $129, p, 1, 1, 0, 1; }"

// OFF-LABEL: func.func @matmul_bf16
// OFF-NOT:     wgmma
// OFF:         mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @matmul_bf16(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %c: memref<256x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x200xbf16>, memref<200x512xbf16>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// -----

// A transposed B (b[j, k]) is K-major: transpose flags 0, 0; f16 too.
// CHECK-LABEL: func.func @a_bt_f16
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0; }"
// SMALL-LABEL: func.func @a_bt_f16
// SMALL:         wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0; }"
// OFF-LABEL: func.func @a_bt_f16
// OFF-NOT:     wgmma
func.func @a_bt_f16(%a: memref<256x64xf16>, %b: memref<136x64xf16>, %c: memref<256x136xf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (j, k)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x64xf16>, memref<136x64xf16>) outs(%c : memref<256x136xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  func.return
}

// -----

// A transposed A (a[k, i]) is M-major: transpose flags 1, 1.
// CHECK-LABEL: func.func @at_b
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 1; }"
func.func @at_b(%a: memref<64x128xbf16>, %b: memref<64x256xbf16>, %c: memref<128x256xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (k, i)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x128xbf16>, memref<64x256xbf16>) outs(%c : memref<128x256xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// -----

// With a fused epilogue (a bias), each of a lane's two adjacent outputs goes through
// the epilogue in f32 on its accumulator (no rounding before it; the bf16 bias loaded
// once a column, at the column's first row, widened as loaded, and given to both rows),
// and the pair is rounded once, together, and stored as one word.
// CHECK-LABEL: func.func @matmul_bias_bf16
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-NOT:     arith.truncf
// CHECK:         %[[B0:.+]] = memref.load %bias
// CHECK-NEXT:    %[[W0:.+]] = arith.extf %[[B0]] : bf16 to f32
// CHECK-NEXT:    %[[B1:.+]] = memref.load %bias
// CHECK-NEXT:    %[[W1:.+]] = arith.extf %[[B1]] : bf16 to f32
// CHECK:         %[[E0:.+]] = arith.addf %{{.+}}, %[[W0]] : f32
// CHECK-NEXT:    %[[E1:.+]] = arith.addf %{{.+}}, %[[W1]] : f32
// CHECK-NEXT:    %[[P:.+]] = llvm.inline_asm "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f" %[[E1]], %[[E0]]
// CHECK-NEXT:    "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; st.global.b32 [ga], $1; }", "l,r,~{memory}" %{{.+}}, %[[P]]
// CHECK-NOT:     memref.load %bias
// CHECK:         arith.addf %{{.+}}, %[[W0]] : f32
// CHECK-NEXT:    arith.addf %{{.+}}, %[[W1]] : f32
// CHECK-NEXT:    cvt.rn.bf16x2.f32
// CHECK-NOT:     arith.truncf
// CHECK-NOT:     mov.b32
// CHECK-NOT:     memref.store
func.func @matmul_bias_bf16(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %bias: memref<512xbf16>, %c: memref<256x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %bias : memref<256x200xbf16>, memref<200x512xbf16>, memref<512xbf16>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    %last = arith.constant 199 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %r = scf.if %done -> (bf16) {
      %e = arith.addf %s, %z : bf16
      scf.yield %e : bf16
    } else {
      scf.yield %s : bf16
    }
    linalg.yield %r : bf16
  }
  func.return
}

// -----

// An epilogue input that reads neither the rows nor the columns (a rank-0 scale, as
// exporters write GELU's constants) is loaded once, after the main loop, not once an
// element; the bias per column once a column. With M and N multiples of
// the tile (256x512 in 128x256 tiles) no element lies outside: the stores have no bounds
// check. At M = 192 the second row of tiles is half outside, and each pair is checked
// (the bias loads, at columns clamped inside N, are not).
// CHECK-LABEL: func.func @matmul_scale_bf16
// CHECK:         "cp.async.wait_group 0;"
// CHECK-NEXT:    %[[S:.+]] = memref.load %scale[] : memref<bf16>
// CHECK-NEXT:    %[[SW:.+]] = arith.extf %[[S]] : bf16 to f32
// CHECK-NOT:     scf.if
// CHECK:         memref.load %bias
// CHECK-NEXT:    arith.extf
// CHECK:         memref.load %bias
// CHECK-NEXT:    arith.extf
// CHECK:         arith.mulf {{.*}}, %[[SW]] : f32
// CHECK-NOT:     scf.if
// CHECK-NOT:     memref.load %scale
// CHECK:         func.return
func.func @matmul_scale_bf16(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %scale: memref<bf16>, %bias: memref<512xbf16>, %c: memref<256x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> ()>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %scale, %bias : memref<256x200xbf16>, memref<200x512xbf16>, memref<bf16>, memref<512xbf16>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %w: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    %last = arith.constant 199 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %r = scf.if %done -> (bf16) {
      %e = arith.mulf %s, %z : bf16
      %f = arith.addf %e, %w : bf16
      scf.yield %f : bf16
    } else {
      scf.yield %s : bf16
    }
    linalg.yield %r : bf16
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @matmul_scale_partial_bf16
// CHECK:         "cp.async.wait_group 0;"
// CHECK-NEXT:    memref.load %scale[] : memref<bf16>
// CHECK-NOT:     scf.if
// CHECK:         memref.load %bias
// CHECK-NOT:     scf.if
// CHECK:         memref.load %bias
// CHECK-NOT:     memref.load %bias
// CHECK:         scf.if
// CHECK-NOT:       memref.load %bias
// CHECK:           st.global.b32
// CHECK-NOT:     memref.load %scale
// CHECK:         func.return
func.func @matmul_scale_partial_bf16(%a: memref<192x200xbf16>, %b: memref<200x512xbf16>, %scale: memref<bf16>, %bias: memref<512xbf16>, %c: memref<192x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> ()>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %scale, %bias : memref<192x200xbf16>, memref<200x512xbf16>, memref<bf16>, memref<512xbf16>) outs(%c : memref<192x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: bf16, %w: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    %last = arith.constant 199 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %r = scf.if %done -> (bf16) {
      %e = arith.mulf %s, %z : bf16
      %f = arith.addf %e, %w : bf16
      scf.yield %f : bf16
    } else {
      scf.yield %s : bf16
    }
    linalg.yield %r : bf16
  }
  func.return
}

// -----

// An epilogue as autocast leaves it (the bf16 result widened, f32 bias and math,
// rounded back) computes on the f32 accumulator: no rounding before it, its casts
// gone, its bf16 constant (0.5) an f32 one, and the pair rounded once at the store;
// the mma.sync kernel stores its pairs alike.
// CHECK-LABEL: func.func @matmul_autocast_epilogue
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-NOT:     arith.truncf
// CHECK-NOT:     arith.extf
// CHECK:         %[[B:.+]] = memref.load %bias{{.+}} : memref<512xf32>
// CHECK:         %[[S:.+]] = arith.addf %{{.+}}, %[[B]] : f32
// CHECK-NEXT:    %[[H:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[G:.+]] = math.erf %[[S]] : f32
// CHECK-NEXT:    arith.mulf %[[G]], %[[H]] : f32
// CHECK:         cvt.rn.bf16x2.f32
// CHECK-NOT:     arith.truncf
// CHECK-NOT:     arith.extf
// CHECK:         func.return
// OFF-LABEL: func.func @matmul_autocast_epilogue
// OFF:         mma.sync.aligned.m16n8k16
// OFF-NOT:     arith.extf
// OFF:         arith.constant 5.000000e-01 : f32
// OFF-NEXT:    math.erf %{{.+}} : f32
// OFF-NEXT:    %[[Y0:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// OFF:         arith.constant 5.000000e-01 : f32
// OFF-NEXT:    math.erf %{{.+}} : f32
// OFF-NEXT:    %[[Y1:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// OFF-NEXT:    %[[P:.+]] = llvm.inline_asm "cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f" %[[Y1]], %[[Y0]]
// OFF-NEXT:    st.global.b32 [ga], $1; }", "l,r,~{memory}" %{{.+}}, %[[P]]
// OFF-NOT:     arith.truncf
// OFF-NOT:     memref.store
// OFF:         func.return
func.func @matmul_autocast_epilogue(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %bias: memref<512xf32>, %c: memref<256x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %bias : memref<256x200xbf16>, memref<200x512xbf16>, memref<512xf32>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %z: f32, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    %last = arith.constant 199 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %r = scf.if %done -> (bf16) {
      %w = arith.extf %s : bf16 to f32
      %e = arith.addf %w, %z : f32
      %h = arith.constant 5.000000e-01 : bf16
      %g = math.erf %e : f32
      %hw = arith.extf %h : bf16 to f32
      %m = arith.mulf %g, %hw : f32
      %n = arith.truncf %m : f32 to bf16
      scf.yield %n : bf16
    } else {
      scf.yield %s : bf16
    }
    linalg.yield %r : bf16
  }
  func.return
}

// -----

// Splat constant inputs (GELU's 0.5 and 1/sqrt(2), full size and per column, as some
// exporters write them) are immediates in f32, made once, never loaded; a constant
// that is not a splat is loaded (here once: it reads no loop).
// CHECK-LABEL: func.func @matmul_splat_constants
// CHECK:         "cp.async.wait_group 0;"
// CHECK-NEXT:    %[[H:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[R:.+]] = arith.constant 0.70703125 : f32
// CHECK:         memref.load %steps
// CHECK-NOT:     memref.load %half
// CHECK-NOT:     memref.load %root
// CHECK:         arith.mulf %{{.+}}, %[[H]] : f32
// CHECK-NEXT:    arith.mulf %{{.+}}, %[[R]] : f32
// CHECK-NOT:     memref.load
// CHECK-NOT:     arith.constant 5.000000e-01
// CHECK:         func.return
// OFF-LABEL: func.func @matmul_splat_constants
// OFF-NOT:     memref.load %half
// OFF-NOT:     memref.load %root
// OFF:         memref.load %steps
// OFF-NOT:     memref.load %half
// OFF-NOT:     memref.load %root
// OFF:         func.return
"memref.global"() <{sym_name = "half", type = memref<256x512xbf16>, initial_value = dense<5.000000e-01> : tensor<256x512xbf16>, sym_visibility = "private", constant}> : () -> ()
"memref.global"() <{sym_name = "root", type = memref<512xbf16>, initial_value = dense<7.070310e-01> : tensor<512xbf16>, sym_visibility = "private", constant}> : () -> ()
"memref.global"() <{sym_name = "ramp", type = memref<2xbf16>, initial_value = dense<[1.0, 2.0]> : tensor<2xbf16>, sym_visibility = "private", constant}> : () -> ()
func.func @matmul_splat_constants(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %c: memref<256x512xbf16>) {
  %half = memref.get_global @half : memref<256x512xbf16>
  %root = memref.get_global @root : memref<512xbf16>
  %ramp = memref.get_global @ramp : memref<2xbf16>
  %steps = memref.expand_shape %ramp [[0, 1]] output_shape [1, 2] : memref<2xbf16> into memref<1x2xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (0, 1)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %half, %root, %steps : memref<256x200xbf16>, memref<200x512xbf16>, memref<256x512xbf16>, memref<512xbf16>, memref<1x2xbf16>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %h: bf16, %r: bf16, %t: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    %last = arith.constant 199 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %o = scf.if %done -> (bf16) {
      %e = arith.mulf %s, %h : bf16
      %f = arith.mulf %e, %r : bf16
      %g = arith.addf %f, %t : bf16
      scf.yield %g : bf16
    } else {
      scf.yield %s : bf16
    }
    linalg.yield %o : bf16
  }
  func.return
}

// -----

// N even but not a multiple of 8 (wgmma declines it): the mma.sync kernel still stores
// its column pairs as one word, after one check of the pair's first column (N even: the
// second is inside too). N odd: one element at a time, each rounded once.
// CHECK-LABEL: func.func @matmul_even_n
// CHECK-NOT:     wgmma
// CHECK:         mma.sync.aligned.m16n8k16
// CHECK:         scf.if
// CHECK:           cvt.rn.f16x2.f32 $0, $1, $2;
// CHECK-NEXT:      st.global.b32
// CHECK-NOT:       memref.store
// CHECK-LABEL: func.func @matmul_odd_n
// CHECK:         mma.sync.aligned.m16n8k16
// CHECK:         scf.if
// CHECK:           arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:      arith.truncf %{{.+}} : f32 to f16
// CHECK-NEXT:      memref.store
// CHECK-NOT:     cvt.rn.f16x2.f32
// CHECK:         func.return
func.func @matmul_even_n(%a: memref<256x64xf16>, %b: memref<64x130xf16>, %c: memref<256x130xf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x64xf16>, memref<64x130xf16>) outs(%c : memref<256x130xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  func.return
}
func.func @matmul_odd_n(%a: memref<256x64xf16>, %b: memref<64x129xf16>, %c: memref<256x129xf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x64xf16>, memref<64x129xf16>) outs(%c : memref<256x129xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    %last = arith.constant 63 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %r = scf.if %done -> (f16) {
      %zero = arith.constant 0.0 : f16
      %m = arith.maximumf %s, %zero : f16
      scf.yield %m : f16
    } else {
      scf.yield %s : f16
    }
    linalg.yield %r : f16
  }
  func.return
}

// -----

// An epilogue that reads bits (a bitcast) has no f32 form: each element is rounded
// first and the epilogue runs in bf16, the pair packed as it is.
// CHECK-LABEL: func.func @matmul_bitcast_epilogue
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK:         arith.truncf {{.*}} : f32 to bf16
// CHECK-NEXT:    arith.bitcast {{.*}} : bf16 to i16
// CHECK:         "mov.b32 $0, {$1, $2};"
// CHECK-NOT:     cvt.rn.bf16x2.f32
// CHECK:         func.return
func.func @matmul_bitcast_epilogue(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %c: memref<256x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x200xbf16>, memref<200x512xbf16>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    %last = arith.constant 199 : index
    %k = linalg.index 1 : index
    %done = arith.cmpi eq, %k, %last : index
    %r = scf.if %done -> (bf16) {
      %i = arith.bitcast %s : bf16 to i16
      %mask = arith.constant 32767 : i16
      %a2 = arith.andi %i, %mask : i16
      %f = arith.bitcast %a2 : i16 to bf16
      scf.yield %f : bf16
    } else {
      scf.yield %s : bf16
    }
    linalg.yield %r : bf16
  }
  func.return
}

// -----

// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{wgmma-tma=false wgmma=on}' 2>&1 | filecheck %s --check-prefix=BAD-MODE
// BAD-MODE: error: pass 'convert-contractions-to-gpu': wgmma=on: auto or off
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{wgmma-tma=false wgmma-tile=96,256,4}' 2>&1 | filecheck %s --check-prefix=BAD-ROWS
// BAD-ROWS: error: pass 'convert-contractions-to-gpu': wgmma-tile=96,256,4: rows must be 64, 128, 192 or 256 (64 a warpgroup)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{wgmma-tma=false wgmma-tile=128,256,2}' 2>&1 | filecheck %s --check-prefix=BAD-STAGES
// BAD-STAGES: error: pass 'convert-contractions-to-gpu': wgmma-tile=128,256,2: a wgmma pipeline takes 3 stages or more
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{wgmma-tma=false wgmma-tile=256,256,4}' 2>&1 | filecheck %s --check-prefix=BAD-SHARED
// BAD-SHARED: error: pass 'convert-contractions-to-gpu': wgmma-tile=256,256,4: 263168 bytes of shared memory (232448 allowed)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{wgmma-tma=false wgmma-tile=128,256}' 2>&1 | filecheck %s --check-prefix=BAD-FIELDS
// BAD-FIELDS: error: pass 'convert-contractions-to-gpu': wgmma-tile takes ROWS,COLS,STAGES, got [128, 256]
