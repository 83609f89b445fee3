// RUN: mlc-opt --list-passes | filecheck %s
// RUN: mlc-opt --list-passes %s | filecheck %s
// RUN: mlc-opt --list-passes | filecheck %s --check-prefix=FOREIGN
// RUN: mlc-opt --list-passes=all | filecheck %s --check-prefix=ALL
// RUN: mlc-opt %s --list-passes=all | filecheck %s --check-prefix=ALL
// RUN: not mlc-opt --list-passes=riscv 2>&1 | filecheck %s --check-prefix=BAD

// `--list-passes` prints mlc's passes, then the xDSL passes that work on mlc's dialects,
// each section sorted, one pass a line with the first sentence of its docstring, and
// exits without reading the input. mlc's `canonicalize`, `cse` and `lower-affine`
// replace xDSL's, so each is listed once, in mlc's section.

// CHECK:      {{^}}mlc passes:{{$}}
// CHECK-NEXT: {{^}}  autocast {{ +}}Run f32 matmuls and convolutions in bf16 or f16, statistics in f32{{$}}
// CHECK-NEXT: {{^}}  autodiff {{ +}}Add the gradient (or VJP) function of an `ml` function{{$}}
// CHECK-NEXT: {{^}}  autodiff-partition {{ +}}Split joint forward/backward functions, saving the min-cut set of activations{{$}}
// CHECK-NEXT: {{^}}  autotune-tiles {{ +}}Mark each static matmul or convolution with its measured blocking{{$}}
// CHECK-NEXT: {{^}}  bound-device-sizes {{ +}}Size buffers and launches at the static bound of a device-computed size{{$}}
// CHECK-NEXT: {{^}}  bufferize {{ +}}Tensors to memrefs for every function of the module{{$}}
// CHECK-NEXT: {{^}}  canonicalize {{ +}}Canonicalize and fold{{$}}
// CHECK-NEXT: {{^}}  collapse-parallel-generics {{ +}}Elementwise generics over contiguous buffers as one flat loop{{$}}
// CHECK:      {{^}}  cse {{ +}}Eliminate common subexpressions{{$}}
// CHECK:      {{^}}  licm {{ +}}Hoist invariant ops out of `scf.for` / `scf.while`{{$}}
// CHECK-NEXT: {{^}}  linalg-fuse-elementwise {{ +}}Fuse elementwise
// CHECK-NEXT: {{^}}  linalg-tile {{ +}}Tile and vectorise matmul generics on memrefs{{$}}
// CHECK-NEXT: {{^}}  lower-affine {{ +}}Lower `affine` ops to `arith`, `scf` and `memref`{{$}}
// CHECK:      {{^}}  simplify-graph {{ +}}`shape-inference` and `canonicalize`
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}xDSL passes for mlc's dialects:{{$}}
// CHECK:      {{^}}  convert-linalg-to-loops {{ +}}Converts a linalg structured ops to perfectly nested loops{{$}}
// CHECK-NOT:  {{^}}  cse
// CHECK:      {{^}}  dce {{ +}}Erase unused operations that have no side effects{{$}}
// CHECK-NOT:  {{^}}  lower-affine
// CHECK:      {{^}}  scf-parallel-loop-tiling {{ +}}Tile the innermost `scf.parallel` loops by the given sizes{{$}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}{{[0-9]+}} more xDSL passes for other dialects: --list-passes=all{{$}}
// CHECK-NOT:  {{.}}

// Passes of dialects and targets mlc does not use, and xDSL's test passes, stay out.
// FOREIGN-NOT: riscv
// FOREIGN-NOT: x86
// FOREIGN-NOT: stencil
// FOREIGN-NOT: csl
// FOREIGN-NOT: snitch
// FOREIGN-NOT: printf
// FOREIGN-NOT: pdl
// FOREIGN-NOT: fpga
// FOREIGN-NOT: {{^}}  test-
// FOREIGN-NOT: canonicalize-dmp

// `--list-passes=all` adds them in a third section, and no hint.
// ALL:      {{^}}mlc passes:{{$}}
// ALL:      {{^}}  canonicalize {{ +}}Canonicalize and fold{{$}}
// ALL-NOT:  {{^}}  canonicalize {{ }}
// ALL:      {{^}}  cse {{ +}}
// ALL:      {{^}}xDSL passes for mlc's dialects:{{$}}
// ALL-NOT:  {{^}}  cse {{ }}
// ALL:      {{^}}  dce {{ +}}
// ALL:      {{^}}other xDSL passes (other dialects and targets, xDSL's tests):{{$}}
// ALL:      {{^}}  convert-arith-to-riscv{{$}}
// ALL:      {{^}}  stencil-inlining{{$}}
// ALL:      {{^}}  test-linalg-tiling {{ +}}Tile supported structured linalg ops
// ALL:      {{^}}  x86-set-arch {{ +}}Sets the `x86.arch` attribute on the module{{$}}
// ALL-NOT:  more xDSL passes

// BAD: mlc-opt: error: argument --list-passes: ignored explicit argument 'riscv' (see 'mlc-opt --help')

func.func @valid(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
