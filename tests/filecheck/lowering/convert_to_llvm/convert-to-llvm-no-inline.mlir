// RUN: mlc-opt %s -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-to-llvm | mlc-translate --mlir-to-llvmir | filecheck %s --check-prefix=IR

// A function with the unit attribute `no_inline` (the shared micro-kernels and B
// packings of linalg-tile) keeps it as the `llvm.func` property, which the LLVM IR
// translation spells `noinline`: LLVM then keeps one copy instead of inlining it into
// each caller. A function without it gets neither.

// CHECK:       llvm.func internal @shared(%{{.*}}: i64) -> i64 attributes {{.*}}no_inline
// CHECK:       llvm.func internal @plain(
// CHECK-NOT:     no_inline
// CHECK:       llvm.func @caller(

// IR:          define internal i64 @"shared"(i64 %{{.*}}) noinline
// IR:          define internal i64 @"plain"(i64 %{{.*}})
// IR-NOT:        noinline
// IR:          define i64 @"caller"

func.func private @shared(%x: i64) -> i64 attributes {no_inline} {
  %y = arith.addi %x, %x : i64
  func.return %y : i64
}

func.func private @plain(%x: i64) -> i64 {
  %y = arith.muli %x, %x : i64
  func.return %y : i64
}

func.func @caller(%x: i64) -> i64 {
  %a = func.call @shared(%x) : (i64) -> i64
  %b = func.call @plain(%a) : (i64) -> i64
  func.return %b : i64
}
