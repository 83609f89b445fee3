// RUN: mlc-opt %s --split-input-file -p bufferize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p bufferize --remarks 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=REMARK
// RUN: mlc-opt %s --split-input-file -p bufferize --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Donated arguments (`ml.result_alias`): the result is left in the argument's buffer,
// in place where the argument dies at the update, else copied in at the return.

// Donated argument: an elementwise update whose input dies there is written into the
// argument's buffer, which is neither allocated, returned nor freed.

// CHECK-LABEL: func.func @in_place
// CHECK-SAME:    (%[[P:[a-zA-Z0-9_]+]]: memref<8xf32> {ml.result_alias = 0 : i64}, %[[G:[a-zA-Z0-9_]+]]: memref<8xf32>) {
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[P]], %[[G]] : memref<8xf32>, memref<8xf32>) outs(%[[P]] : memref<8xf32>)
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return{{$}}

#id = affine_map<(d0) -> (d0)>
func.func @in_place(%p: tensor<8xf32> {ml.result_alias = 0 : i64}, %g: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

// Of two inputs that die at the update, the one whose argument holds the result is
// overwritten (not the temporary listed first, which would need a copy back).

// CHECK-LABEL: func.func @prefers_its_own_argument
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<8xf32>, %[[M:[a-zA-Z0-9_]+]]: memref<8xf32> {ml.result_alias = 0 : i64})
// CHECK:         %[[T:.+]] = memref.alloc()
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<8xf32>) outs(%[[T]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %[[M]] : memref<8xf32>, memref<8xf32>) outs(%[[M]] : memref<8xf32>)
// CHECK-NEXT:    ^bb
// CHECK:         memref.dealloc %[[T]]
// CHECK-NEXT:    func.return{{$}}

#id = affine_map<(d0) -> (d0)>
func.func @prefers_its_own_argument(%x: tensor<8xf32>, %m: tensor<8xf32> {ml.result_alias = 0 : i64}) -> tensor<8xf32> {
  %e0 = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%t, %m : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

// The argument is read after its update: the update goes to a temporary, copied into
// the argument at the return, after the last read (with a remark). The other result is
// not computed in the donated buffer, which would need a copy out.

// CHECK-LABEL: func.func @read_after
// CHECK-SAME:    (%[[P:[a-zA-Z0-9_]+]]: memref<8xf32> {ml.result_alias = 0 : i64}, %[[G:[a-zA-Z0-9_]+]]: memref<8xf32>) -> memref<8xf32>
// CHECK:         %[[R:.+]] = memref.alloc()
// CHECK:         linalg.generic {{.*}} ins(%[[P]], %[[G]] : {{.*}}) outs(%[[R]] : memref<8xf32>)
// CHECK:         %[[Q:.+]] = memref.alloc()
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : memref<8xf32>) outs(%[[Q]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[R]] : memref<8xf32>) outs(%[[P]] : memref<8xf32>)
// CHECK:         memref.dealloc %[[R]]
// CHECK-NEXT:    func.return %[[Q]] : memref<8xf32>

// The copy into the argument takes the return's location.
// LOC-LABEL:   func.func @read_after
// LOC:           ins(%{{.*}} : memref<8xf32>) outs(%p : memref<8xf32>) {
// LOC-NEXT:      ^bb
// LOC-NEXT:        linalg.yield {{.*}} loc("step.py":9:3)
// LOC-NEXT:      } loc("step.py":9:3)
// REMARK: remark: 'func.return' op result 0 is copied into donated argument 0: it was not computed in that buffer

#id = affine_map<(d0) -> (d0)>
func.func @read_after(%p: tensor<8xf32> {ml.result_alias = 0 : i64}, %g: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  func.return %r, %q : tensor<8xf32>, tensor<8xf32> loc("step.py":9:3)
}

// -----

// Two donated arguments swapped: each value is saved before either is overwritten.

// CHECK-LABEL: func.func @swap
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<8xf32> {ml.result_alias = 1 : i64}, %[[B:[a-zA-Z0-9_]+]]: memref<8xf32> {ml.result_alias = 0 : i64})
// CHECK:         %[[SB:.+]] = memref.alloc()
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : memref<8xf32>) outs(%[[SB]] : memref<8xf32>)
// CHECK:         %[[SA:.+]] = memref.alloc()
// CHECK:         linalg.generic {{.*}} ins(%[[A]] : memref<8xf32>) outs(%[[SA]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[SB]] : memref<8xf32>) outs(%[[A]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[SA]] : memref<8xf32>) outs(%[[B]] : memref<8xf32>)
// CHECK:         func.return{{$}}
// REMARK: remark: 'func.return' op result 1 is copied into donated argument 0: it was not computed in that buffer
// REMARK: remark: 'func.return' op result 0 is copied into donated argument 1: it was not computed in that buffer

func.func @swap(%a: tensor<8xf32> {ml.result_alias = 1 : i64}, %b: tensor<8xf32> {ml.result_alias = 0 : i64}) -> (tensor<8xf32>, tensor<8xf32>) {
  func.return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// A donated argument returned as its own result needs nothing.

// CHECK-LABEL: func.func @unchanged
// CHECK-NEXT:    func.return{{$}}

func.func @unchanged(%a: tensor<8xf32> {ml.result_alias = 0 : i64}) -> tensor<8xf32> {
  func.return %a : tensor<8xf32>
}

// -----

// A loop body runs again, so it never overwrites a donated argument: the loop gets a
// copy, and its result is copied back at the return.

// CHECK-LABEL: func.func @not_in_a_loop
// CHECK-SAME:    (%[[P:[a-zA-Z0-9_]+]]: memref<8xf32> {ml.result_alias = 0 : i64}, %{{.*}}: index)
// CHECK:         %[[C:.+]] = memref.alloc()
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : memref<8xf32>) outs(%[[C]] : memref<8xf32>)
// CHECK:         %[[L:.+]] = scf.for {{.*}} iter_args(%[[ACC:.+]] = %[[C]])
// CHECK:           linalg.generic {{.*}} ins(%[[P]] : memref<8xf32>) outs(%[[ACC]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[L]] : memref<8xf32>) outs(%[[P]] : memref<8xf32>)
// CHECK:         memref.dealloc %[[L]]
// CHECK-NEXT:    func.return{{$}}
// REMARK: remark: 'func.return' op result 0 is copied into donated argument 0: it was not computed in that buffer

#id = affine_map<(d0) -> (d0)>
func.func @not_in_a_loop(%p: tensor<8xf32> {ml.result_alias = 0 : i64}, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %p) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%p : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %t : tensor<8xf32>
  }
  func.return %r : tensor<8xf32>
}
