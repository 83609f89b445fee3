// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-to-llvm

// Vector ops outside the kernels' subset are located errors, not crashes.

func.func @reduce_mul(%v: vector<4xf32>, %s: f32) -> f32 {
  // expected-error @+1 {{'vector.reduction' op is supported by convert-to-llvm for kind <add> only}}
  %r = vector.reduction <mul>, %v, %s : vector<4xf32> into f32
  func.return %r : f32
}

// -----

func.func @reduce_int(%v: vector<4xi32>, %s: i32) -> i32 {
  // expected-error @+1 {{'vector.reduction' op is supported by convert-to-llvm for floats only}}
  %r = vector.reduction <add>, %v, %s : vector<4xi32> into i32
  func.return %r : i32
}

// -----

func.func @reduce_no_acc(%v: vector<4xf32>) -> f32 {
  // expected-error @+1 {{'vector.reduction' op needs an accumulator operand in convert-to-llvm}}
  %r = vector.reduction <add>, %v : vector<4xf32> into f32
  func.return %r : f32
}

// -----

func.func @broadcast_vector(%v: vector<1xf32>) -> vector<4xf32> {
  // expected-error @+1 {{'vector.broadcast' op of a vector is not supported by convert-to-llvm (only of a scalar)}}
  %b = vector.broadcast %v : vector<1xf32> to vector<4xf32>
  func.return %b : vector<4xf32>
}

// -----

func.func @mask_2d(%n: index) -> vector<4x4xi1> {
  // expected-error @+1 {{'vector.create_mask' op is supported by convert-to-llvm for 1-D masks only}}
  %m = vector.create_mask %n, %n : vector<4x4xi1>
  func.return %m : vector<4x4xi1>
}

// -----

func.func @masked_int(%m: memref<?xi32>, %n: index, %v: vector<4xi32>) {
  %c0 = arith.constant 0 : index
  %mask = vector.create_mask %n : vector<4xi1>
  // expected-error @+1 {{'vector.maskedstore' op is supported by convert-to-llvm for float vectors only}}
  vector.maskedstore %m[%c0], %mask, %v : memref<?xi32>, vector<4xi1>, vector<4xi32>
  func.return
}
