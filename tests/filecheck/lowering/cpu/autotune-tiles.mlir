// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,bufferize,autotune-tiles{cache="%t.json"}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,bufferize,autotune-tiles{cache="%t.json" measure=false}' | filecheck %s
// RUN: rm -f %t.none.json
// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,bufferize,autotune-tiles{cache="%t.none.json" measure=false}' \
// RUN:   | filecheck %s --check-prefix=UNMEASURED

// A static matmul is timed and marked with the blocking that won (MR, NR, KC, MC,
// vector length); its zero fill is not. The second run measures nothing: it reads the
// choice the first recorded in the cache file and marks the matmul the same way.
// Without a recorded choice and with measure=false, nothing is marked.

// CHECK-LABEL: func.func @static
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : memref<24x40xf32>) {{\{$}}
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : memref<24x36xf32>, memref<36x40xf32>) outs(%{{.+}} : memref<24x40xf32>)
// CHECK-SAME:      mlc.tiles = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>
// UNMEASURED-LABEL: func.func @static
// UNMEASURED-NOT:   mlc.tiles
func.func @static(%x: tensor<24x36xf32>, %w: tensor<36x40xf32>) -> tensor<24x40xf32> {
  %y = ml.matmul %x, %w : (tensor<24x36xf32>, tensor<36x40xf32>) -> tensor<24x40xf32>
  func.return %y : tensor<24x40xf32>
}

// -----

// Rows known only at run time: nothing to time at compile time.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:     mlc.tiles
// CHECK:         func.return
func.func @dynamic(%x: tensor<?x36xf32>, %w: tensor<36x40xf32>) -> tensor<?x40xf32> {
  %y = ml.matmul %x, %w : (tensor<?x36xf32>, tensor<36x40xf32>) -> tensor<?x40xf32>
  func.return %y : tensor<?x40xf32>
}

// -----

// A matrix-vector product and a 3-column matmul take no register kernel to block.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT:     mlc.tiles
// CHECK:         func.return
func.func @narrow(%x: tensor<24x36xf32>, %v: tensor<36x1xf32>, %w: tensor<36x3xf32>) -> (tensor<24x1xf32>, tensor<24x3xf32>) {
  %y = ml.matmul %x, %v : (tensor<24x36xf32>, tensor<36x1xf32>) -> tensor<24x1xf32>
  %z = ml.matmul %x, %w : (tensor<24x36xf32>, tensor<36x3xf32>) -> tensor<24x3xf32>
  func.return %y, %z : tensor<24x1xf32>, tensor<24x3xf32>
}
