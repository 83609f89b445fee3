// RUN: mlc-opt %s -p 'cse,canonicalize' | filecheck %s
// RUN: mlc-opt %s --passes='cse,canonicalize' | filecheck %s
// RUN: mlc-opt %s --passes 'cse,canonicalize' | filecheck %s
// RUN: mlc-opt %s | filecheck %s --check-prefix=NONE
// RUN: mlc-opt %s -p '' | filecheck %s --check-prefix=NONE
// RUN: mlc-opt %s -p 'arith-add-fastmath{flags=nnan,ninf}' | filecheck %s --check-prefix=OPTION
// RUN: mlc-opt %s -p 'cse,arith-add-fastmath{flags=fast},canonicalize' | filecheck %s --check-prefixes=CHECK,FAST

// `-p` / `--passes` run a textual pipeline in order; an xDSL pass takes its options
// in braces. With no pipeline (or an empty one) the IR comes back unchanged.

// cse merges the duplicate ml.add and erases the dead ml.relu; canonicalize keeps
// the rest.
func.func @cse_then_canonicalize(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = ml.mul %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = ml.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @cse_then_canonicalize
// CHECK-NEXT:    %[[SUM:[a-zA-Z0-9_]+]] = ml.add %a, %b
// CHECK-NEXT:    %[[PROD:[a-zA-Z0-9_]+]] = ml.mul %[[SUM]], %[[SUM]]
// CHECK-NEXT:    func.return %[[PROD]]

// NONE-LABEL: func.func @cse_then_canonicalize
// NONE-NEXT:    ml.add %a, %b
// NONE-NEXT:    ml.add %a, %b
// NONE-NEXT:    ml.mul
// NONE-NEXT:    ml.relu %a

// The option of an xDSL pass reaches the pass.
func.func @pass_option(%x: f32, %y: f32) -> f32 {
  %0 = arith.addf %x, %y : f32
  func.return %0 : f32
}

// OPTION-LABEL: func.func @pass_option
// OPTION:         arith.addf %x, %y fastmath<nnan,ninf> : f32

// FAST-LABEL: func.func @pass_option
// FAST:         arith.addf %x, %y fastmath<fast> : f32
