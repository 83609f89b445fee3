// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Numpy broadcasting of dynamic dims decided at run time (convert_ml_to_linalg/broadcast).

// Dims that provably have one size (a value and what the lowering built from it) keep
// plain maps and need no check.

// CHECK-LABEL: func.func @tied_dims
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-NOT:     tensor.extract
// CHECK:         func.return
func.func @tied_dims(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = ml.relu %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = ml.mul %x, %r : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}

// -----

// Argument dims that share a name in ml.dim_names are one size (the caller checks).

// CHECK-LABEL: func.func @named_dims
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x4xf32>)
func.func @named_dims(%x: tensor<?x4xf32> {ml.dim_names = ["n", ""]}, %y: tensor<?x4xf32> {ml.dim_names = ["n", ""]}) -> tensor<?x4xf32> {
  %s = ml.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %s : tensor<?x4xf32>
}

// -----

// Static dims lower as before: a static 1 reads index 0, and nothing is checked.

// CHECK-LABEL: func.func @static_dims
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
func.func @static_dims(%x: tensor<4x1xf32>, %y: tensor<1x5xf32>) -> tensor<4x5xf32> {
  %s = ml.add %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  func.return %s : tensor<4x5xf32>
}

// -----

// A dynamic dim against a static 4 may be 1: it is checked to be 1 or 4, and read
// with tensor.extract at index * (size == 4 ? 1 : 0). The other operand stays an input.

// CHECK-LABEL: func.func @against_static
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK:         %[[N:.+]] = tensor.dim %[[X]]
// CHECK:         %[[SAME:.+]] = arith.cmpi eq, %[[N]], %{{.*}} : index
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[STRIDE:.+]] = arith.select %[[SAME]], %[[ONE]], %[[ZERO]] : index
// CHECK:         %[[OK:.+]] = arith.ori
// CHECK-NEXT:    cf.assert %[[OK]], "'ml.add' op operand #0 dim 0 must be 1 or 4 (broadcast to result dim 0)"
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>]
// CHECK-SAME:      ins(%[[Y]] : tensor<4xf32>)
// CHECK:           %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[J:.+]] = arith.muli %[[I]], %[[STRIDE]] : index
// CHECK-NEXT:      %[[V:.+]] = tensor.extract %[[X]][%[[J]]] : tensor<?xf32>
// CHECK-NEXT:      arith.addf %[[V]], %{{.*}} : f32

// LOC-LABEL:   func.func @against_static
// LOC:           cf.assert {{.*}} loc("model.py":5:7)
func.func @against_static(%x: tensor<?xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %s = ml.add %x, %y : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32> loc("model.py":5:7)
  func.return %s : tensor<4xf32>
}

// -----

// Two unrelated dynamic dims: the result size is their broadcast, the smallest one
// where they conflict (1 ? b : (b == 1 ? a : min(a, b))), and both are read at strides.

// CHECK-LABEL: func.func @two_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?xi32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<?xi32>)
// CHECK:         %[[A:.+]] = tensor.dim %[[X]]
// CHECK:         %[[B:.+]] = tensor.dim %[[Y]]
// CHECK:         %[[A1:.+]] = arith.cmpi eq, %[[A]], %{{.*}} : index
// CHECK:         %[[B1:.+]] = arith.cmpi eq, %[[B]], %{{.*}} : index
// CHECK-NEXT:    %[[MIN:.+]] = arith.minsi %[[A]], %[[B]] : index
// CHECK-NEXT:    %[[NOT_A:.+]] = arith.select %[[B1]], %[[A]], %[[MIN]] : index
// CHECK-NEXT:    %[[SIZE:.+]] = arith.select %[[A1]], %[[B]], %[[NOT_A]] : index
// CHECK:         cf.assert %{{.*}}, "'ml.max' op operand #0 dim 0, operand #1 dim 0 must be 1 or one common size (broadcast to result dim 0)"
// CHECK-NEXT:    %[[E:.+]] = tensor.empty(%[[SIZE]]) : tensor<?xi32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>]
// CHECK-SAME:      outs(%[[E]] : tensor<?xi32>)
// CHECK:           tensor.extract %[[X]]
// CHECK:           tensor.extract %[[Y]]
// CHECK:           arith.maxsi
func.func @two_dynamic(%x: tensor<?xi32>, %y: tensor<?xi32>) -> tensor<?xi32> {
  %s = ml.max %x, %y : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  func.return %s : tensor<?xi32>
}

// -----

// A dynamic dim alone in its result dim (the other operand lacks it) is the result's.

// CHECK-LABEL: func.func @missing_partner
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
func.func @missing_partner(%x: tensor<?x4xf32>, %y: tensor<4xf32>) -> tensor<?x4xf32> {
  %s = ml.sub %x, %y : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %s : tensor<?x4xf32>
}

// -----

// select: the i1 condition broadcasts like the data operands.

// CHECK-LABEL: func.func @select
// CHECK:         cf.assert %{{.*}}, "'ml.select' op operand #0 dim 0, operand #1 dim 0 must be 1 or one common size
// CHECK:         linalg.generic
// CHECK:           tensor.extract %{{.*}} : tensor<?xi1>
// CHECK:           arith.select
func.func @select(%c: tensor<?xi1>, %x: tensor<?xf32>, %y: tensor<1xf32>) -> tensor<?xf32> {
  %s = ml.select %c, %x, %y : (tensor<?xi1>, tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// -----

// matmul: a batch dim that may be 1 is broadcast by a copy to the full batch size, so
// the contraction keeps plain maps; inner dims not provably equal are checked, and
// `b`'s rows read at a run-time stride (0 when they differ, so nothing is read past `b`).

// CHECK-LABEL: func.func @matmul_batch
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x3x4xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<?x?x2xf32>)
// CHECK:         cf.assert %{{.*}}, "'ml.matmul' op operand #0 dim 2 must equal operand #1 dim 1 (the inner dims)"
// CHECK:         cf.assert %{{.*}}, "'ml.matmul' op operand #0 dim 0, operand #1 dim 0 must be 1 or one common size (broadcast to result dim 0)"
// CHECK:         %[[CA:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x4xf32>)
// CHECK:           tensor.extract %[[A]]
// CHECK:         %[[CB:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x4x2xf32>)
// CHECK:           tensor.extract %[[B]]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>]
// CHECK-SAME:      ins(%[[CA]], %[[CB]] : tensor<?x3x4xf32>, tensor<?x4x2xf32>)
func.func @matmul_batch(%a: tensor<?x3x4xf32>, %b: tensor<?x?x2xf32>) -> tensor<?x3x2xf32> {
  %m = ml.matmul %a, %b : (tensor<?x3x4xf32>, tensor<?x?x2xf32>) -> tensor<?x3x2xf32>
  func.return %m : tensor<?x3x2xf32>
}
