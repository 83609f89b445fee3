// RUN: mlc-opt %s --verify-diagnostics -p convert-parallel-loops-to-gpu

func.func @reduction(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{scf.parallel with reductions is not supported on the GPU target}}
  %r = "scf.parallel"(%c0, %n, %c1, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %one = arith.constant 1.0 : f32
    "scf.reduce"(%one) ({
    ^bb1(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      "scf.reduce.return"(%s) : (f32) -> ()
    }) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  func.return %r : f32
}
