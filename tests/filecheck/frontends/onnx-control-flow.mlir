// RUN: python %S/Inputs/onnx_control_flow_models.py %t
// RUN: mlc-opt %t/for.onnx | filecheck %s --check-prefix=FOR
// RUN: mlc-opt %t/while.onnx | filecheck %s --check-prefix=WHILE
// RUN: mlc-opt %t/if.onnx | filecheck %s --check-prefix=IF
// RUN: mlc-opt %t/if.onnx --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %t/scan.onnx | filecheck %s --check-prefix=SCAN
//
// ONNX control flow as imported (Inputs/onnx_control_flow_models.py writes the models):
// the scf op each node becomes, its regions reading outer values directly.

// A Loop with a trip count whose body passes its condition on: an `scf.for` over
// [0, max(M, 0)), each step writing its row into zeros of M rows.

// FOR:         %[[M:.+]] = arith.maxsi
// FOR:         %[[STACK:.+]] = ml.broadcast_to {{.*}} -> tensor<?x3xf32>
// FOR:         scf.for %[[I:.+]] = %{{.+}} to %[[M]] step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[ROWS:.+]] = %[[STACK]]) -> (tensor<3xf32>, tensor<?x3xf32>)
// FOR:           %[[SUM:.+]] = ml.add %[[ACC]], %x
// FOR:           %[[ROW:.+]] = ml.reshape %[[SUM]] : (tensor<3xf32>) -> tensor<1x3xf32>
// FOR-NEXT:      %[[NEW:.+]] = tensor.insert_slice %[[ROW]] into %[[ROWS]][%[[I]], 0] [1, 3] [1, 1]
// FOR-NEXT:      scf.yield %[[SUM]], %[[NEW]]
// FOR-NOT:     scf.while

// A Loop on a condition alone: an `scf.while` carrying the step and the condition
// before the values; the stacked rows grow by one each step.

// WHILE:       scf.while (%[[I:.+]] = %{{.+}}, %[[C:.+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) : (index, i1, tensor<3xf32>, tensor<?x3xf32>)
// WHILE-NEXT:    scf.condition(%[[C]])
// WHILE:       } do {
// WHILE:         ml.cmp "lt"
// WHILE:         scf.if
// WHILE:           tensor.cast {{.*}} : tensor<1x3xf32> to tensor<?x3xf32>
// WHILE:         } else {
// WHILE-NEXT:      ml.concat
// WHILE:         arith.addi
// WHILE-NEXT:    tensor.extract
// WHILE-NEXT:    scf.yield

// If: the branches' outputs of shapes [3] and [1] are one `tensor<?xf32>`.

// IF:          %[[C:.+]] = tensor.extract %c[] : tensor<i1>
// IF-NEXT:     scf.if %[[C]] -> (tensor<?xf32>) {
// IF-NEXT:       ml.mul %x, %x
// IF-NEXT:       tensor.cast {{.*}} : tensor<3xf32> to tensor<?xf32>
// IF:          } else {
// IF-NEXT:       ml.slice %x
// IF-NEXT:       tensor.cast {{.*}} : tensor<1xf32> to tensor<?xf32>

// The ops of a branch are located at its nodes, an unnamed one under its If.

// LOC:         ml.mul {{.*}} loc("pick/then/Mul_0"("{{.*}}if.onnx":0:0))
// LOC:         ml.slice {{.*}} loc("pick/else/Slice_0"("{{.*}}if.onnx":0:0))
// LOC:         } loc("pick"("{{.*}}if.onnx":0:0))

// Scan backwards over a dim known at run time: slices at len - 1 - step, rows at the step.

// SCAN:        %[[LEN:.+]] = tensor.dim %x, %{{.+}} : tensor<?x2xf32>
// SCAN:        scf.for %[[I:.+]] = %{{.+}} to %[[LEN]] step
// SCAN:          %[[LAST:.+]] = arith.subi %[[LEN]], %{{.+}} : index
// SCAN-NEXT:     %[[BACK:.+]] = arith.subi %[[LAST]], %[[I]] : index
// SCAN-NEXT:     tensor.extract_slice %x[%[[BACK]], 0] [1, 2] [1, 1]
// SCAN:          tensor.insert_slice {{.*}}[%[[I]], 0] [1, 2] [1, 1]
