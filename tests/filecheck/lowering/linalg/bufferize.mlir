// RUN: mlc-opt %s --split-input-file -p bufferize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p bufferize | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file -p bufferize --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Every op bufferize builds takes the location of the op it comes from (the LOC
// lines): an alloc that of its `tensor.empty`, or of the op that needs a copy; a
// dealloc that of the op whose buffer it frees; a global that of its constant.


// A chain of elementwise ops: one buffer, written in place by each op whose input
// dies there. Arguments are never written; the broadcast input is not read
// element for element, so it cannot be overwritten either.

// CHECK-LABEL: func.func @chain_in_place
// CHECK-SAME:    (%[[A:.+]]: memref<4x?xf32>, %[[B:.+]]: memref<1x?xf32>) -> memref<4x?xf32>
// CHECK:         %[[N:.+]] = memref.dim %[[A]]
// CHECK-NEXT:    %[[BUF:.+]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<4x?xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[BUF]] : memref<4x?xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BUF]] : memref<4x?xf32>) outs(%[[BUF]] : memref<4x?xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[BUF]], %[[A]] : {{.*}}) outs(%[[BUF]] : memref<4x?xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return %[[BUF]] : memref<4x?xf32>

// LOC-LABEL:   func.func @chain_in_place
// LOC:           memref.dim {{.*}} loc("model.py":1:1)
// LOC-NEXT:      memref.alloc({{.*}} loc("model.py":2:1)
// LOC:           } loc("model.py":3:1)
// LOC:           } loc("model.py":4:1)
func.func @chain_in_place(%a: tensor<4x?xf32>, %b: tensor<1x?xf32>) -> tensor<4x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c1 : tensor<4x?xf32> loc("model.py":1:1)
  %e0 = tensor.empty(%n) : tensor<4x?xf32> loc("model.py":2:1)
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x?xf32>, tensor<1x?xf32>) outs(%e0 : tensor<4x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32> loc("model.py":3:1)
  %e1 = tensor.empty(%n) : tensor<4x?xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x?xf32>) outs(%e1 : tensor<4x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32> loc("model.py":4:1)
  %e2 = tensor.empty(%n) : tensor<4x?xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%t, %a : tensor<4x?xf32>, tensor<4x?xf32>) outs(%e2 : tensor<4x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x?xf32>
  %unused = tensor.empty(%n) : tensor<4x?xf32>
  func.return %u : tensor<4x?xf32>
}

// -----

// The reduction accumulates into its fill's buffer; the scalar temporary is freed
// right after its last use; the exponentials are divided in place.

// CHECK-LABEL: func.func @temporaries
// CHECK:         %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[T]] : memref<8xf32>)
// CHECK:         %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<f32>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[ACC]] : memref<f32>)
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : memref<8xf32>) outs(%[[ACC]] : memref<f32>)
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %[[ACC]] : memref<8xf32>, memref<f32>) outs(%[[T]] : memref<8xf32>)
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[ACC]] : memref<f32>
// CHECK-NEXT:    func.return %[[T]] : memref<8xf32>

// LOC-LABEL:   func.func @temporaries
// LOC:           %[[ACC:.+]] = memref.alloc() {{.*}} : memref<f32> loc("model.py":12:1)
// LOC:           memref.dealloc %[[ACC]] : memref<f32> loc("model.py":12:1)
func.func @temporaries(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %z = tensor.empty() : tensor<f32> loc("model.py":12:1)
  %zero = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%z : tensor<f32>) {
  ^bb0(%o: f32):
    %c = arith.constant 0.0 : f32
    linalg.yield %c : f32
  } -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%t : tensor<8xf32>) outs(%zero : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<8xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t, %sum : tensor<8xf32>, tensor<f32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %r = arith.divf %x, %s : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %d : tensor<8xf32>
}

// -----

// A value used again later is not overwritten.

// CHECK-LABEL: func.func @used_later
// CHECK:         %[[T:.+]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         %[[U:.+]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[T]] : memref<8xf32>) outs(%[[U]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[U]], %[[T]] : memref<8xf32>, memref<8xf32>) outs(%[[U]] : memref<8xf32>)
// CHECK:         memref.dealloc %[[T]]
// CHECK-NEXT:    func.return %[[U]]
func.func @used_later(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.sqrt %x : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%u, %t : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %v : tensor<8xf32>
}

// -----

// What a function returns is a fresh buffer the caller owns: never an argument,
// a constant or a view, and not the same buffer twice.

// CHECK:       "memref.global"() <{sym_name = "__constant_0", type = memref<2xf32>, initial_value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, sym_visibility = "private", constant, alignment = 64 : i64}>
// CHECK-LABEL: func.func @fresh_results
// CHECK-SAME:    (%[[A:.+]]: memref<?x8xf32>) -> (memref<?x8xf32>, memref<2xf32>, memref<?xf32>, memref<?x8xf32>)
// CHECK:         %[[G:.+]] = memref.get_global @__constant_0 : memref<2xf32>
// CHECK:         %[[FLAT:.+]] = memref.collapse_shape %[[A]] {{\[}}[0 : i64, 1 : i64]] : memref<?x8xf32> into memref<?xf32>
// CHECK:         %[[R0:.+]] = memref.alloc
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[A]] : memref<?x8xf32>) outs(%[[R0]] : memref<?x8xf32>)
// CHECK:         %[[R1:.+]] = memref.alloc() {{.*}} : memref<2xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[G]] : memref<2xf32>) outs(%[[R1]] : memref<2xf32>)
// CHECK:         %[[R2:.+]] = memref.alloc
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[FLAT]] : memref<?xf32>) outs(%[[R2]] : memref<?xf32>)
// CHECK:         %[[R3:.+]] = memref.alloc
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[A]] : memref<?x8xf32>) outs(%[[R3]] : memref<?x8xf32>)
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return %[[R0]], %[[R1]], %[[R2]], %[[R3]]

// The copies of the argument, the constant and the view are the return's.
// LOC:           "memref.global"() <{sym_name = "__constant_0"{{.*}} loc("model.py":21:1)
// LOC-LABEL:     func.func @fresh_results
// LOC:             memref.get_global @__constant_0 {{.*}} loc("model.py":21:1)
// LOC-NEXT:        memref.collapse_shape {{.*}} loc("model.py":22:1)
// LOC-NEXT:        arith.constant 0 : index loc("model.py":23:1)
// LOC-NEXT:        memref.dim {{.*}} loc("model.py":23:1)
// LOC-NEXT:        %[[R0:.+]] = memref.alloc({{.*}} loc("model.py":23:1)
// LOC-NEXT:        linalg.generic {{.*}} ins(%a : memref<?x8xf32>) outs(%[[R0]] : memref<?x8xf32>) {
// LOC-NEXT:        ^{{.*}}
// LOC-NEXT:          linalg.yield {{.*}} loc("model.py":23:1)
// LOC-NEXT:        } loc("model.py":23:1)
// LOC:             func.return {{.*}} loc("model.py":23:1)
func.func @fresh_results(%a: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<2xf32>, tensor<?xf32>, tensor<?x8xf32>) {
  %k = arith.constant dense<[1.0, 2.0]> : tensor<2xf32> loc("model.py":21:1)
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<?x8xf32> into tensor<?xf32> loc("model.py":22:1)
  func.return %a, %k, %flat, %a : tensor<?x8xf32>, tensor<2xf32>, tensor<?xf32>, tensor<?x8xf32> loc("model.py":23:1)
}

// -----

// A loop owns what it carries: its init is a copy when the value lives on (here an
// argument), the body updates the carried buffer in place and hands it on.

// CHECK-LABEL: func.func @loop_in_place
// CHECK-SAME:    (%[[P0:.+]]: memref<8xf32>, %[[N:.+]]: index)
// CHECK:         %[[K:.+]] = memref.get_global
// CHECK:         %[[INIT:.+]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[P0]] : memref<8xf32>) outs(%[[INIT]] : memref<8xf32>)
// CHECK:         %[[R:.+]] = scf.for {{.*}} iter_args(%[[P:.+]] = %[[INIT]]) -> (memref<8xf32>) {
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[P]], %[[K]] : memref<8xf32>, memref<8xf32>) outs(%[[P]] : memref<8xf32>)
// CHECK:           scf.yield %[[P]] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @loop_in_place(%p0: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant dense<2.0> : tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %q = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%p, %k : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      linalg.yield %m : f32
    } -> tensor<8xf32>
    scf.yield %q : tensor<8xf32>
  }
  func.return %r : tensor<8xf32>
}

// -----

// When the new value cannot overwrite the old one (a transpose reads other
// elements), the body allocates, frees the value it replaces, and hands the new
// one on. An init that dies at the loop is handed in without a copy.

// CHECK-LABEL: func.func @loop_replaces
// CHECK:         %[[INIT:.+]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK:         scf.for {{.*}} iter_args(%[[P:.+]] = %[[INIT]]) -> (memref<4x4xf32>) {
// CHECK-NEXT:      %[[NEW:.+]] = memref.alloc() {{.*}} : memref<4x4xf32>
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[P]] : memref<4x4xf32>) outs(%[[NEW]] : memref<4x4xf32>)
// CHECK:           }
// CHECK-NEXT:      memref.dealloc %[[P]] : memref<4x4xf32>
// CHECK-NEXT:      scf.yield %[[NEW]] : memref<4x4xf32>

// Inside the loop: the alloc is its empty's, the dealloc of the carried value the loop's.
// LOC-LABEL:   func.func @loop_replaces
// LOC:           scf.for
// LOC-NEXT:        %[[NEW:.+]] = memref.alloc() {{.*}} loc("model.py":32:1)
// LOC-NEXT:        linalg.generic {{.*}} outs(%[[NEW]] : memref<4x4xf32>) {
// LOC:             } loc("model.py":33:1)
// LOC-NEXT:        memref.dealloc {{.*}} loc("model.py":31:1)
// LOC-NEXT:        scf.yield %[[NEW]] : memref<4x4xf32> loc("model.py":34:1)
// LOC-NEXT:      } loc("model.py":31:1)
func.func @loop_replaces(%a: tensor<4x4xf32>, %n: index) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.negf %x : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %init) -> (tensor<4x4xf32>) {
    %e2 = tensor.empty() : tensor<4x4xf32> loc("model.py":32:1)
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%p : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
    ^bb0(%x: f32, %o: f32):
      linalg.yield %x : f32
    } -> tensor<4x4xf32> loc("model.py":33:1)
    scf.yield %q : tensor<4x4xf32> loc("model.py":34:1)
  } loc("model.py":31:1)
  func.return %r : tensor<4x4xf32>
}

// -----

// Each branch of an scf.if hands over a buffer of its own.

// CHECK-LABEL: func.func @branches
// CHECK:         scf.if %{{.*}} -> (memref<4xf32>) {
// CHECK-NEXT:      %[[T:.+]] = memref.alloc
// CHECK:           scf.yield %[[T]] : memref<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[C:.+]] = memref.alloc
// CHECK-NEXT:      linalg.generic {{.*}} outs(%[[C]] : memref<4xf32>)
// CHECK:           scf.yield %[[C]] : memref<4xf32>

// The copy of the argument in the else branch is its yield's.
// LOC-LABEL:   func.func @branches
// LOC:           scf.if
// LOC-NEXT:        memref.alloc() {{.*}} loc("model.py":41:1)
// LOC:             } loc("model.py":42:1)
// LOC:           } else {
// LOC-NEXT:        memref.alloc() {{.*}} loc("model.py":43:1)
// LOC:             } loc("model.py":43:1)
// LOC-NEXT:        scf.yield {{.*}} loc("model.py":43:1)
// LOC-NEXT:      } loc("model.py":44:1)
func.func @branches(%c: i1, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32> loc("model.py":41:1)
    %q = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.negf %x : f32
      linalg.yield %m : f32
    } -> tensor<4xf32> loc("model.py":42:1)
    scf.yield %q : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32> loc("model.py":43:1)
  } loc("model.py":44:1)
  func.return %r : tensor<4xf32>
}

// -----

// scf.while: the condition hands its value to the body, which owns it; a read
// inside the condition region is a memref.load. Inserting a slice of a value into
// that same value copies it first (the slice is a view of it).

// CHECK-LABEL: func.func @while_and_slices
// CHECK:         scf.while (%[[X:.+]] = %{{.*}}) : (memref<4xf32>) -> memref<4xf32> {
// CHECK:           memref.load %[[X]]
// CHECK:           scf.condition(%{{.*}}) %[[X]] : memref<4xf32>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[Y:.+]]: memref<4xf32>):
// CHECK-NEXT:      %[[S:.+]] = memref.subview %[[Y]][1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
// CHECK-NEXT:      %[[D:.+]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[Y]] : memref<4xf32>) outs(%[[D]] : memref<4xf32>)
// CHECK:           %[[W:.+]] = memref.subview %[[D]][0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[S]] : {{.*}}) outs(%[[W]] : {{.*}})
// CHECK:           memref.dealloc %[[Y]] : memref<4xf32>
// CHECK-NEXT:      scf.yield %[[D]] : memref<4xf32>

// LOC-LABEL:   func.func @while_and_slices
// LOC:           scf.while
// LOC:             memref.load {{.*}} loc("model.py":53:1)
// LOC:           } do {
// LOC:             memref.subview {{.*}} loc("model.py":51:1)
// LOC-NEXT:        memref.alloc() {{.*}} loc("model.py":52:1)
// LOC:             } loc("model.py":52:1)
// LOC-NEXT:        memref.subview {{.*}} loc("model.py":52:1)
// LOC:             } loc("model.py":52:1)
// LOC-NEXT:        memref.dealloc {{.*}} loc("model.py":54:1)
// LOC-NEXT:        scf.yield
// LOC-NEXT:      } loc("model.py":54:1)
func.func @while_and_slices(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.while (%x = %a) : (tensor<4xf32>) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %v = tensor.extract %x[%c0] : tensor<4xf32> loc("model.py":53:1)
    %lim = arith.constant 100.0 : f32
    %go = arith.cmpf olt, %v, %lim : f32
    scf.condition(%go) %x : tensor<4xf32>
  } do {
  ^bb0(%y: tensor<4xf32>):
    %s = tensor.extract_slice %y[1] [2] [1] : tensor<4xf32> to tensor<2xf32> loc("model.py":51:1)
    %i = tensor.insert_slice %s into %y[0] [2] [1] : tensor<2xf32> into tensor<4xf32> loc("model.py":52:1)
    scf.yield %i : tensor<4xf32>
  } loc("model.py":54:1)
  func.return %r : tensor<4xf32>
}

// -----

// A generic whose body reads a buffer (gather-style indexing) never writes into it.

// CHECK-LABEL: func.func @read_in_body
// CHECK:         %[[OUT:.+]] = memref.alloc
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : memref<4xf32>)
// CHECK:           memref.load
func.func @read_in_body(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.negf %x : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %j = arith.subi %c3, %i : index
    %y = tensor.extract %t[%j] : tensor<4xf32>
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// A `dense_resource` constant (a large weight) becomes an uninitialised public global
// named after its handle, one per handle: the data stays out of the IR.

// CHECK:       "memref.global"() <{sym_name = "__resource_fc.weight_0123", type = memref<2x2xf32>, initial_value, sym_visibility = "public", constant, alignment = 64 : i64}>
// CHECK-NOT:   "memref.global"
// CHECK-LABEL: func.func @resource_constant
// CHECK:         memref.get_global @__resource_fc.weight_0123 : memref<2x2xf32>
// CHECK:         memref.get_global @__resource_fc.weight_0123 : memref<2x2xf32>
func.func @resource_constant() -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = arith.constant dense_resource<fc.weight_0123> : tensor<2x2xf32>
  %v = arith.constant dense_resource<fc.weight_0123> : tensor<2x2xf32>
  func.return %w, %v : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// `tensor.from_elements` (a run-time shape) fills a fresh buffer element by element.

// CHECK-LABEL: func.func @shape_of
// CHECK:         %[[B:.+]] = memref.alloc() {{.*}} : memref<2xi64>
// CHECK:         memref.store %{{.*}}, %[[B]][%{{.*}}] : memref<2xi64>
// CHECK:         memref.store %{{.*}}, %[[B]][%{{.*}}] : memref<2xi64>
// CHECK:         func.return %[[B]]
func.func @shape_of(%x: tensor<?x?xf32>) -> tensor<2xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %i0 = arith.index_cast %d0 : index to i64
  %i1 = arith.index_cast %d1 : index to i64
  %s = tensor.from_elements %i0, %i1 : tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// -----

// A `tensor.cast` (static to dynamic dims, as ONNX loops carry a value whose shape
// changes) is a `memref.cast` view of its source's buffer, at the cast's location.

// CHECK-LABEL: func.func @cast_into_loop
// CHECK-SAME:    (%[[X:.+]]: memref<4xf32>, %{{.+}}: index) -> memref<?xf32>
// CHECK:         %[[V:.+]] = "memref.cast"(%[[X]]) : (memref<4xf32>) -> memref<?xf32>
// CHECK:         scf.for {{.*}} -> (memref<?xf32>)

// LOC-LABEL:   func.func @cast_into_loop
// LOC:           "memref.cast"({{.*}}) : (memref<4xf32>) -> memref<?xf32> loc("model.onnx":3:1)
func.func @cast_into_loop(%x: tensor<4xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tensor.cast %x : tensor<4xf32> to tensor<?xf32> loc("model.onnx":3:1)
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %d) -> (tensor<?xf32>) {
    scf.yield %acc : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

// -----

// tensor.insert: a memref.store into the buffer it updates where that buffer dies there
// (a loop carrying it, updated in place; the loop keeps its attributes), into a copy
// where the tensor is read after.

// CHECK-LABEL: func.func @insert_in_loop
// CHECK-SAME:    (%[[T:[a-zA-Z0-9_]+]]: memref<4xi64>, %[[N:[a-zA-Z0-9_]+]]: index)
// CHECK:         memref.alloc() {{.*}}: memref<4xi64>
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[S:.+]] = %{{.+}}) -> (memref<4xi64>) {
// CHECK:           %[[V:.+]] = memref.load %[[S]][%[[I]]] : memref<4xi64>
// CHECK-NOT:       memref.alloc
// CHECK:           memref.store %{{.+}}, %[[S]][%[[I]]] : memref<4xi64>
// CHECK:           scf.yield %[[S]] : memref<4xi64>
// CHECK:         } {mlc.sequential}
func.func @insert_in_loop(%t: tensor<4xi64>, %n: index) -> (tensor<4xi64>, tensor<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %t) -> (tensor<4xi64>) {
    %v = tensor.extract %s[%i] : tensor<4xi64>
    %w = arith.addi %v, %one : i64
    %u = tensor.insert %w into %s[%i] : tensor<4xi64>
    scf.yield %u : tensor<4xi64>
  } {mlc.sequential}
  func.return %r, %t : tensor<4xi64>, tensor<4xi64>
}
