// RUN: mlc-opt %s --verify-diagnostics
// RUN: not mlc-opt %s 2>&1 | filecheck %s
// RUN: not mlc-translate --mlir-to-llvmir %s 2>&1 | filecheck %s

// A symbol defined twice is reported at its second definition, naming the first.

// CHECK-NOT: Traceback
// CHECK:     mlc-opt-duplicate-symbol.mlir:[[# @LINE + 6]]:1: error: 'func.func' op redefinition of symbol "main" (first at {{.*}}mlc-opt-duplicate-symbol.mlir:[[# @LINE + 1]]:1)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// expected-error @+1 {{'func.func' op redefinition of symbol "main" (first at}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
