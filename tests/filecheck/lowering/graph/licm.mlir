// RUN: mlc-opt %s --split-input-file -p licm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p licm,licm | filecheck %s
// The second RUN checks idempotence: a second application changes nothing.

// A chain of invariant ops (ml, arith, tensor) leaves the loop in order; ops that
// read the induction variable or an iter_arg stay.

// CHECK-LABEL: func.func @for_chain
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4xf32>, %[[X0:[a-zA-Z0-9_]+]]: tensor<4xf32>, %[[T:[a-zA-Z0-9_]+]]: tensor<?xf32>
// CHECK:         %[[E:.+]] = ml.exp %[[A]]
// CHECK-NEXT:    %[[N:.+]] = ml.neg %[[E]]
// CHECK-NEXT:    %[[S:.+]] = arith.addf %[[E]], %[[N]] : tensor<4xf32>
// CHECK-NEXT:    %[[D:.+]] = tensor.dim %[[T]], %{{.+}} : tensor<?xf32>
// CHECK-NEXT:    scf.for %[[I:.+]] = {{.*}} iter_args(%[[X:.+]] = %[[X0]])
// CHECK-NEXT:      %[[Y:.+]] = ml.mul %[[S]], %[[X]]
// CHECK-NEXT:      %[[II:.+]] = arith.addi %[[I]], %[[D]] : index
// CHECK-NEXT:      scf.yield %[[Y]]
func.func @for_chain(%a: tensor<4xf32>, %x0: tensor<4xf32>, %t: tensor<?xf32>) -> tensor<4xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 8 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%x = %x0) -> (tensor<4xf32>) {
    %e = ml.exp %a : (tensor<4xf32>) -> tensor<4xf32>
    %n = ml.neg %e : (tensor<4xf32>) -> tensor<4xf32>
    %s = arith.addf %e, %n : tensor<4xf32>
    %y = ml.mul %s, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %d = tensor.dim %t, %lo : tensor<?xf32>
    %ii = arith.addi %i, %d : index
    scf.yield %y : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Nested loops: each op climbs as far as it stays invariant. %w reads only
// function arguments and leaves both loops; %v reads the outer induction variable
// and stops in the outer body; %z reads the inner iter_arg and stays.

// CHECK-LABEL: func.func @nested
// CHECK:         %[[W:.+]] = ml.sigmoid
// CHECK-NEXT:    scf.for %[[I:[a-zA-Z0-9_]+]] =
// CHECK-NEXT:      %[[IC:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        %[[Z:.+]] = ml.add %[[W]], %{{.+}}
// CHECK-NEXT:        scf.yield %[[Z]]
func.func @nested(%a: tensor<4xf32>, %x0: tensor<4xf32>) -> tensor<4xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 8 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%x = %x0) -> (tensor<4xf32>) {
    %s = scf.for %j = %lo to %hi step %step iter_args(%y = %x) -> (tensor<4xf32>) {
      %w = ml.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
      %v = arith.index_cast %i : index to i64
      %z = ml.add %w, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      scf.yield %z : tensor<4xf32>
    }
    scf.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// scf.while: invariant ops leave both the `before` and the `after` region. The
// `before` region always runs, so even a non-speculatable op (integer ml.div)
// leaves it; the `after` region may never run, so the same op stays there.

// CHECK-LABEL: func.func @while_regions
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xi32>
// CHECK-DAG:     %[[Q:.+]] = ml.div %[[A]], %[[B]]
// CHECK-DAG:     %[[M:.+]] = ml.max %[[A]], %[[B]]
// CHECK:         scf.while
// CHECK-NOT:       ml.max
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK-NEXT:    ^{{.*}}(%[[X:.+]]: tensor<4xi32>):
// CHECK-NEXT:      %[[Q2:.+]] = ml.div %[[B]], %[[A]]
// CHECK-NEXT:      %[[Y:.+]] = ml.add %[[X]], %[[Q2]]
// CHECK-NEXT:      scf.yield %[[Y]]
func.func @while_regions(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: i1) -> tensor<4xi32> {
  %r = scf.while (%x = %a) : (tensor<4xi32>) -> tensor<4xi32> {
    %q = ml.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %m = ml.max %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %s = ml.add %x, %q : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    scf.condition(%c) %s : tensor<4xi32>
  } do {
  ^bb0(%x: tensor<4xi32>):
    %q2 = ml.div %b, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %m2 = ml.max %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %y = ml.add %x, %q2 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    scf.yield %y : tensor<4xi32>
  }
  func.return %r : tensor<4xi32>
}

// -----

// A loop that runs at least once (constant bounds, lb < ub) may have its
// non-speculatable invariant ops hoisted; one with a dynamic bound keeps them.

// CHECK-LABEL: func.func @zero_trip
// CHECK:         %[[Q1:.+]] = arith.divsi
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      arith.addi %{{.+}}, %[[Q1]]
// CHECK:         scf.for
// CHECK-NEXT:      %[[Q2:.+]] = arith.divsi
// CHECK-NEXT:      arith.addi %{{.+}}, %[[Q2]]
func.func @zero_trip(%a: i32, %b: i32, %n: index) -> (i32, i32) {
  %lo = arith.constant 0 : index
  %hi = arith.constant 8 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%x = %a) -> (i32) {
    %q = arith.divsi %a, %b : i32
    %y = arith.addi %x, %q : i32
    scf.yield %y : i32
  }
  %s = scf.for %i = %lo to %n step %step iter_args(%x = %a) -> (i32) {
    %q = arith.divsi %a, %b : i32
    %y = arith.addi %x, %q : i32
    scf.yield %y : i32
  }
  func.return %r, %s : i32, i32
}

// -----

// Ops inside an scf.if are never hoisted, not even when invariant; a speculatable
// op beside the if still leaves a loop that may run zero times, but a
// non-speculatable gather stays.

// CHECK-LABEL: func.func @branches
// CHECK:         %[[T:.+]] = ml.tanh
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      ml.gather
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        ml.div
func.func @branches(%a: tensor<4xf32>, %k: tensor<4xi32>, %idx: tensor<2xi64>, %c: i1, %n: index) -> tensor<4xf32> {
  %lo = arith.constant 0 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %n step %step iter_args(%x = %a) -> (tensor<4xf32>) {
    %g = ml.gather %a, %idx {axis = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
    %y = scf.if %c -> (tensor<4xf32>) {
      %q = ml.div %k, %k : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
      %f = ml.cast %q : (tensor<4xi32>) -> tensor<4xf32>
      scf.yield %f : tensor<4xf32>
    } else {
      scf.yield %x : tensor<4xf32>
    }
    %t = ml.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
    %z = ml.add %y, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// The cost rule (default max-live-bytes = 64 MiB). The outer product e @ u is
// 268 MB but only 134 MFLOPs: keeping it live across the loop is not worth it.
// The transpose (0 FLOPs, 268 MB) feeds a hoisted matmul only, so it is not live
// across the loop and moves too; the 8192^3 matmul is worth its 268 MB. Index
// arithmetic always moves.

// CHECK-LABEL: func.func @cost
// CHECK:         ml.transpose
// CHECK-NEXT:    ml.matmul {{.*}} -> tensor<8192x8192xf32>
// CHECK-NEXT:    arith.muli
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      ml.matmul {{.*}} : (tensor<8192x1xf32>, tensor<1x8192xf32>) -> tensor<8192x8192xf32>
func.func @cost(%e: tensor<8192x1xf32>, %u: tensor<1x8192xf32>, %w: tensor<8192x8192xf32>, %x0: tensor<8192x8192xf32>, %n: index) -> tensor<8192x8192xf32> {
  %lo = arith.constant 0 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %n step %step iter_args(%x = %x0) -> (tensor<8192x8192xf32>) {
    %eu = ml.matmul %e, %u : (tensor<8192x1xf32>, tensor<1x8192xf32>) -> tensor<8192x8192xf32>
    %wt = ml.transpose %w {perm = array<i64: 1, 0>} : (tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
    %ww = ml.matmul %wt, %w : (tensor<8192x8192xf32>, tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
    %nn = arith.muli %n, %n : index
    %a = ml.add %x, %eu : (tensor<8192x8192xf32>, tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
    %b = ml.add %a, %ww : (tensor<8192x8192xf32>, tensor<8192x8192xf32>) -> tensor<8192x8192xf32>
    scf.yield %b : tensor<8192x8192xf32>
  }
  func.return %r : tensor<8192x8192xf32>
}
