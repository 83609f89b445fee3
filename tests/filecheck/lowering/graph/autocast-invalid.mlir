// RUN: not mlc-opt %s -p 'autocast{precision=fp8}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not mlc-opt %s -p 'autocast{precision=f32}' 2>&1 | filecheck %s --check-prefix=F32
// RUN: not mlc-opt %s -p 'autocast{mode=bf16}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// A precision autocast cannot run in is a one-line error naming the pass; f32 (and
// tf32) are no autocast at all: `mlc.compile(precision=...)` runs the pass only for
// bf16 and f16.

// NEGATIVE-NOT: Traceback
// NEGATIVE: mlc-opt: error: pass 'autocast': precision must be one of bf16, f16, got 'fp8'
// NEGATIVE-NOT: {{.}}
// F32: mlc-opt: error: pass 'autocast': precision must be one of bf16, f16, got 'f32'
// UNKNOWN: mlc-opt: error: pass 'autocast'{{.*}}mode
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = ml.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
