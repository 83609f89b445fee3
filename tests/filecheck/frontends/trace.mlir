// RUN: python %S/Inputs/trace_programs.py | filecheck %s
// RUN: python %S/Inputs/trace_programs.py --debuginfo | filecheck %s --check-prefix=LOC
//
// `mlc.trace` on the Python functions of Inputs/trace_programs.py: one `ml` op (or a
// few) per Python operation, constants for the numbers mixed in, `scf` for ops.cond /
// while_loop / fori_loop, and every op located at the Python line that made it.

// An MLP: matmul, broadcast bias, relu, a weak Python scalar kept f32, softmax.

// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<8x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[MM:.+]] = ml.matmul %[[X]], %[[W]]
// CHECK-NEXT:    %[[ADD:.+]] = ml.add %[[MM]], %[[B]] : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[RELU:.+]] = ml.relu %[[ADD]]
// CHECK-NEXT:    %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[MUL:.+]] = ml.mul %[[RELU]], %[[HALF]]
// CHECK-NEXT:    %[[SM:.+]] = ml.softmax %[[MUL]] {axis = -1 : i64}
// CHECK-NEXT:    func.return %[[SM]] : tensor<4x3xf32>

// LOC-LABEL: func.func @mlp
// LOC:         ml.matmul {{.*}} loc("{{.*}}trace_programs.py":12:18)
// LOC:         ml.relu {{.*}} loc("{{.*}}trace_programs.py":12:9)
// LOC:         ml.softmax {{.*}} loc("{{.*}}trace_programs.py":13:12)
// LOC:         func.return {{.*}} loc("{{.*}}trace_programs.py":11:1)

// Basic indexing is `ml.slice` (steps and negative indices included), then a reshape
// where ints drop dims.

// CHECK-LABEL: func.func @views
// CHECK:         %[[S:.+]] = ml.slice %{{.*}} {starts = array<i64: 1, 0>, ends = array<i64: 9223372036854775807, 9223372036854775807>, steps = array<i64: 1, 2>} : (tensor<5x6xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[T:.+]] = ml.transpose %[[S]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[ROW:.+]] = ml.slice %{{.*}} {starts = array<i64: 4, 0>, ends = array<i64: 5, 9223372036854775807>, steps = array<i64: 1, 1>}
// CHECK-NEXT:    %[[LAST:.+]] = ml.reshape %[[ROW]] : (tensor<1x6xf32>) -> tensor<6xf32>
// CHECK-NEXT:    %[[FLAT:.+]] = ml.reshape %{{.*}} : (tensor<5x6xf32>) -> tensor<30xf32>
// CHECK-NEXT:    func.return %[[T]], %[[LAST]], %[[FLAT]]

// fori_loop carries its index as a tensor<i64> next to the state; the traced bound
// is extracted and cast to index; the while body uses the captured %x directly.

// CHECK-LABEL: func.func @control
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3xf32>, %[[N:[a-zA-Z0-9_]+]]: tensor<i64>)
// CHECK:         %[[E:.+]] = tensor.extract %[[N]][] : tensor<i64>
// CHECK-NEXT:    %[[HI:.+]] = arith.index_cast %[[E]] : i64 to index
// CHECK:         %{{.+}}, %[[Y:.+]] = scf.for %{{.+}} = %{{.+}} to %[[HI]] step %{{.+}} iter_args(%[[I:.+]] = %{{.+}}, %[[S:.+]] = %[[X]]) -> (tensor<i64>, tensor<3xf32>) {
// CHECK:           ml.cast %[[I]] : (tensor<i64>) -> tensor<f32>
// CHECK:           scf.yield
// CHECK:         %[[Z:.+]] = scf.while (%{{.+}} = %[[Y]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:           scf.condition
// CHECK:           ml.add %{{.+}}, %[[X]]
// CHECK:         %[[P:.+]] = tensor.extract %{{.+}}[] : tensor<i1>
// CHECK-NEXT:    %[[R:.+]] = scf.if %[[P]] -> (tensor<3xf32>) {
// CHECK-NEXT:      scf.yield %[[Z]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[NEG:.+]] = ml.neg %[[Z]]
// CHECK-NEXT:      scf.yield %[[NEG]]
// CHECK:         func.return %[[R]]

// LOC-LABEL: func.func @control
// LOC:         scf.for
// LOC:         } loc("{{.*}}trace_programs.py":21:9)
// LOC:         } loc("{{.*}}trace_programs.py":22:9)
// LOC:         ml.neg {{.*}} loc("{{.*}}trace_programs.py":23:53)
