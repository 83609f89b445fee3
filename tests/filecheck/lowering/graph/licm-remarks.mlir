// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p 'licm{max-live-bytes=1000000}'
// RUN: mlc-opt %s --split-input-file -p licm --remarks 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=REMARKS

// licm explains itself: every hoisted ml op says which loop it left and what that
// saves, every invariant op that stays says why. With the default max-live-bytes
// (64 MiB) the 4.0 MB outer product is hoisted; with a 1 MB limit it stays.

// REMARKS: licm-remarks.mlir:{{[0-9]+}}:5: remark: 'ml.matmul' op hoisted out of scf.for (saves 2000000 flops per iteration)
// REMARKS: remark: 'ml.sub' op hoisted out of scf.for (saves 1 flops per iteration)
func.func @pagerank_naive(%G: tensor<1000x1000xf32>, %p0: tensor<1000x1xf32>,
                          %e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>) -> tensor<1000x1xf32> {
  %alpha = arith.constant dense<0.85> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %lo = arith.constant 0 : index
  %hi = arith.constant 20 : index
  %step = arith.constant 1 : index
  %p = scf.for %i = %lo to %hi step %step iter_args(%pi = %p0) -> (tensor<1000x1xf32>) {
    // expected-remark @+1 {{not hoisted: would keep 4.0 MB live across the loop}}
    %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
    %eup = ml.matmul %eu, %pi : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    // expected-remark @+1 {{hoisted out of scf.for (saves 1 flops per iteration)}}
    %beta = ml.sub %one, %alpha : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %next = ml.mul %beta, %eup : (tensor<f32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    scf.yield %next : tensor<1000x1xf32>
  }
  func.return %p : tensor<1000x1xf32>
}

// -----

// REMARKS: remark: 'ml.gather' op not hoisted: not speculatable and the loop may run zero times
// REMARKS: remark: 'ml.exp' op not hoisted: depends on 'ml.gather', which stays in the loop
// REMARKS: remark: 'arith.divsi' op not hoisted: not speculatable and the loop may run zero times
func.func @may_run_zero_times(%a: tensor<4xf32>, %idx: tensor<2xi64>, %x0: tensor<2xf32>, %k: i32, %n: index) -> tensor<2xf32> {
  %lo = arith.constant 0 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %n step %step iter_args(%x = %x0) -> (tensor<2xf32>) {
    // expected-remark @+1 {{not hoisted: not speculatable and the loop may run zero times}}
    %g = ml.gather %a, %idx {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    // expected-remark @+1 {{not hoisted: depends on 'ml.gather', which stays in the loop}}
    %e = ml.exp %g : (tensor<2xf32>) -> tensor<2xf32>
    // expected-remark @+1 {{not hoisted: not speculatable and the loop may run zero times}}
    %q = arith.divsi %k, %k : i32
    %y = ml.add %x, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %y : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// An op hoisted through two loops says so once per loop.

func.func @nested(%a: tensor<4xf32>, %x0: tensor<4xf32>) -> tensor<4xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 8 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%x = %x0) -> (tensor<4xf32>) {
    %s = scf.while (%y = %x) : (tensor<4xf32>) -> tensor<4xf32> {
      // expected-remark @+2 {{hoisted out of scf.while (saves 4 flops per iteration)}}
      // expected-remark @+1 {{hoisted out of scf.for (saves 4 flops per iteration)}}
      %w = ml.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      %z = ml.add %w, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %c = arith.constant true
      scf.condition(%c) %z : tensor<4xf32>
    } do {
    ^bb0(%y2: tensor<4xf32>):
      scf.yield %y2 : tensor<4xf32>
    }
    scf.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
