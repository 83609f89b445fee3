// RUN: mlc-opt %s --split-input-file -p matmul-chain-reorder | filecheck %s
// RUN: mlc-opt %s --split-input-file -p matmul-chain-reorder,matmul-chain-reorder | filecheck %s
// RUN: mlc-opt %s --split-input-file -p matmul-chain-reorder --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// The second RUN checks idempotence: a second application changes nothing.

// PageRank's (e @ u) @ p inside nested loops becomes e @ (u @ p): 4e3 FLOPs, not 4e6.
// The new ops take the fused location of the chain's matmuls.

// CHECK-LABEL: func.func @pagerank_in_nested_loops
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<1000x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x1000xf32>
// CHECK:         scf.for
// CHECK:         scf.for {{.*}} iter_args(%[[P:[a-zA-Z0-9_]+]] =
// CHECK-NEXT:      %[[UP:[a-zA-Z0-9_]+]] = ml.matmul %[[U]], %[[P]] : (tensor<1x1000xf32>, tensor<1000x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:      %[[EUP:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[UP]] : (tensor<1000x1xf32>, tensor<1x1xf32>) -> tensor<1000x1xf32>
// CHECK-NEXT:      scf.yield %[[EUP]]

// LOC-LABEL:   func.func @pagerank_in_nested_loops
// LOC-COUNT-2:   ml.matmul {{.*}} loc(fused["pagerank.py":2:3, "pagerank.py":1:3])
func.func @pagerank_in_nested_loops(%e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>, %p0: tensor<1000x1xf32>) -> tensor<1000x1xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%q = %p0) -> (tensor<1000x1xf32>) {
    %s = scf.for %j = %lo to %hi step %step iter_args(%p = %q) -> (tensor<1000x1xf32>) {
      %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32> loc("pagerank.py":1:3)
      %eup = ml.matmul %eu, %p : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32> loc("pagerank.py":2:3)
      scf.yield %eup : tensor<1000x1xf32>
    }
    scf.yield %s : tensor<1000x1xf32>
  }
  func.return %r : tensor<1000x1xf32>
}

// -----

// A left-associated 4-chain (2x10, 10x2, 2x10, 10x2) is cheapest split in the
// middle: (a @ b) @ (c @ d) costs 176 FLOPs against 240.

// CHECK-LABEL: func.func @four_chain_middle_split
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x10xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<10x2xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x10xf32>, %[[D:[a-zA-Z0-9_]+]]: tensor<10x2xf32>)
// CHECK-NEXT:    %[[AB:[a-zA-Z0-9_]+]] = ml.matmul %[[A]], %[[B]]
// CHECK-NEXT:    %[[CD:[a-zA-Z0-9_]+]] = ml.matmul %[[C]], %[[D]]
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[AB]], %[[CD]]
// CHECK-NEXT:    func.return %[[R]]
func.func @four_chain_middle_split(%a: tensor<2x10xf32>, %b: tensor<10x2xf32>, %c: tensor<2x10xf32>, %d: tensor<10x2xf32>) -> tensor<2x2xf32> {
  %ab = ml.matmul %a, %b : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  %abc = ml.matmul %ab, %c : (tensor<2x2xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  %abcd = ml.matmul %abc, %d : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  func.return %abcd : tensor<2x2xf32>
}

// -----

// A chain already in an optimal order is left as written.

// CHECK-LABEL: func.func @already_optimal
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x10xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<10x2xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x10xf32>)
// CHECK-NEXT:    %[[AB:[a-zA-Z0-9_]+]] = ml.matmul %[[A]], %[[B]]
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[AB]], %[[C]]
// CHECK-NEXT:    func.return %[[R]]
func.func @already_optimal(%a: tensor<2x10xf32>, %b: tensor<10x2xf32>, %c: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %ab = ml.matmul %a, %b : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  %abc = ml.matmul %ab, %c : (tensor<2x2xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return %abc : tensor<2x10xf32>
}

// -----

// An intermediate with a second use must be computed anyway: no reordering.

// CHECK-LABEL: func.func @intermediate_with_two_uses
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<1000x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x1000xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<1000x1xf32>)
// CHECK-NEXT:    %[[EU:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[U]]
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[EU]], %[[P]]
// CHECK-NEXT:    func.return %[[R]], %[[EU]]
func.func @intermediate_with_two_uses(%e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>, %p: tensor<1000x1xf32>) -> (tensor<1000x1xf32>, tensor<1000x1000xf32>) {
  %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
  %eup = ml.matmul %eu, %p : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
  func.return %eup, %eu : tensor<1000x1xf32>, tensor<1000x1000xf32>
}

// -----

// Dynamic dims are symbols: e @ (u @ p) costs 2*n + 2*m, no more than (e @ u) @ p
// at 4*n*m for every n, m >= 1, so the chain is reordered.

// CHECK-LABEL: func.func @dynamic_decided
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<?x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x?xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<?x1xf32>)
// CHECK-NEXT:    %[[UP:[a-zA-Z0-9_]+]] = ml.matmul %[[U]], %[[P]] : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[UP]] : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @dynamic_decided(%e: tensor<?x1xf32>, %u: tensor<1x?xf32>, %p: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %eup = ml.matmul %eu, %p : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  func.return %eup : tensor<?x1xf32>
}

// -----

// Where the best order depends on the sizes ((a @ b) @ c or a @ (b @ c) with four
// unknown dims), the chain is left alone.

// CHECK-LABEL: func.func @dynamic_undecided
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x?xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<?x?xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<?x?xf32>)
// CHECK-NEXT:    %[[AB:[a-zA-Z0-9_]+]] = ml.matmul %[[A]], %[[B]]
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[AB]], %[[C]]
// CHECK-NEXT:    func.return %[[R]]
func.func @dynamic_undecided(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %ab = ml.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %abc = ml.matmul %ab, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %abc : tensor<?x?xf32>
}

// -----

// One symbol on both sides decides: with a: ?x4 (n rows) and w: 4x1, (a^T @ a) @ w
// costs 32*n + 32 and a^T @ (a @ w) 16*n, less for every n >= 1.

// CHECK-LABEL: func.func @dynamic_same_symbol
// CHECK:         ml.transpose
// CHECK-NEXT:    %[[AW:[a-zA-Z0-9_]+]] = ml.matmul %{{.*}} : (tensor<?x4xf32>, tensor<4x1xf32>) -> tensor<?x1xf32>
// CHECK-NEXT:    ml.matmul %{{.*}}, %[[AW]] : (tensor<4x?xf32>, tensor<?x1xf32>) -> tensor<4x1xf32>
func.func @dynamic_same_symbol(%a: tensor<?x4xf32>, %w: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %at = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %ata = ml.matmul %at, %a : (tensor<4x?xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  %r = ml.matmul %ata, %w : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

// Batched operands that share the same static batch dims are reordered per batch.

// CHECK-LABEL: func.func @same_batch
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<4x100x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<4x1x100xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<4x100x1xf32>)
// CHECK-NEXT:    %[[UP:[a-zA-Z0-9_]+]] = ml.matmul %[[U]], %[[P]] : (tensor<4x1x100xf32>, tensor<4x100x1xf32>) -> tensor<4x1x1xf32>
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[UP]]
// CHECK-NEXT:    func.return %[[R]]
func.func @same_batch(%e: tensor<4x100x1xf32>, %u: tensor<4x1x100xf32>, %p: tensor<4x100x1xf32>) -> tensor<4x100x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<4x100x1xf32>, tensor<4x1x100xf32>) -> tensor<4x100x100xf32>
  %eup = ml.matmul %eu, %p : (tensor<4x100x100xf32>, tensor<4x100x1xf32>) -> tensor<4x100x1xf32>
  func.return %eup : tensor<4x100x1xf32>
}

// -----

// Broadcast batch dims change the cost per product: no reordering.

// CHECK-LABEL: func.func @broadcast_batch
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<100x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<4x1x100xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<4x100x1xf32>)
// CHECK-NEXT:    %[[EU:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[U]]
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[EU]], %[[P]]
// CHECK-NEXT:    func.return %[[R]]
func.func @broadcast_batch(%e: tensor<100x1xf32>, %u: tensor<4x1x100xf32>, %p: tensor<4x100x1xf32>) -> tensor<4x100x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<4x1x100xf32>) -> tensor<4x100x100xf32>
  %eup = ml.matmul %eu, %p : (tensor<4x100x100xf32>, tensor<4x100x1xf32>) -> tensor<4x100x1xf32>
  func.return %eup : tensor<4x100x1xf32>
}

// -----

// Chains in scf.if and scf.while bodies are reordered in place; a chain does not
// reach into an enclosing region (that would move work into the loop).

// CHECK-LABEL: func.func @if_and_while_bodies
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<100x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x100xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<100x1xf32>
// CHECK:         %[[EU:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[U]]
// CHECK:         scf.if
// CHECK-NEXT:      %[[UP:[a-zA-Z0-9_]+]] = ml.matmul %[[U]], %[[P]]
// CHECK-NEXT:      %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[UP]]
// CHECK-NEXT:      scf.yield %[[R]]
// CHECK:         scf.while
// CHECK:         } do {
// CHECK-NEXT:    ^{{.*}}(%[[Q:[a-zA-Z0-9_]+]]: tensor<100x1xf32>):
// CHECK-NEXT:      %[[UQ:[a-zA-Z0-9_]+]] = ml.matmul %[[U]], %[[Q]]
// CHECK-NEXT:      %[[S:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[UQ]]
// CHECK-NEXT:      scf.yield %[[S]]
// CHECK:         scf.for
// CHECK-NEXT:      ml.matmul %[[EU]],
func.func @if_and_while_bodies(%e: tensor<100x1xf32>, %u: tensor<1x100xf32>, %p: tensor<100x1xf32>, %c: i1) -> (tensor<100x1xf32>, tensor<100x1xf32>, tensor<100x1xf32>) {
  %eu = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<1x100xf32>) -> tensor<100x100xf32>
  %r = scf.if %c -> (tensor<100x1xf32>) {
    %eu1 = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<1x100xf32>) -> tensor<100x100xf32>
    %eup = ml.matmul %eu1, %p : (tensor<100x100xf32>, tensor<100x1xf32>) -> tensor<100x1xf32>
    scf.yield %eup : tensor<100x1xf32>
  } else {
    scf.yield %p : tensor<100x1xf32>
  }
  %w = scf.while (%x = %p) : (tensor<100x1xf32>) -> tensor<100x1xf32> {
    scf.condition(%c) %x : tensor<100x1xf32>
  } do {
  ^bb0(%q: tensor<100x1xf32>):
    %eu2 = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<1x100xf32>) -> tensor<100x100xf32>
    %euq = ml.matmul %eu2, %q : (tensor<100x100xf32>, tensor<100x1xf32>) -> tensor<100x1xf32>
    scf.yield %euq : tensor<100x1xf32>
  }
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %step = arith.constant 1 : index
  %f = scf.for %i = %lo to %hi step %step iter_args(%t = %p) -> (tensor<100x1xf32>) {
    %eut = ml.matmul %eu, %t : (tensor<100x100xf32>, tensor<100x1xf32>) -> tensor<100x1xf32>
    scf.yield %eut : tensor<100x1xf32>
  }
  func.return %r, %w, %f : tensor<100x1xf32>, tensor<100x1xf32>, tensor<100x1xf32>
}

// -----

// Through a transpose: ((e @ u) @ p)^T is built as p^T @ (u^T @ e^T)'s cheapest
// order, (p^T @ u^T) @ e^T: the transposes move to the leaves, where the matmul's
// indexing maps absorb them, rather than copying the product.

// CHECK-LABEL: func.func @through_transpose
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<100x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x100xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<100x1xf32>)
// CHECK-NEXT:    %[[PT:[a-zA-Z0-9_]+]] = ml.transpose %[[P]] {perm = array<i64: 1, 0>} : (tensor<100x1xf32>) -> tensor<1x100xf32>
// CHECK-NEXT:    %[[UT:[a-zA-Z0-9_]+]] = ml.transpose %[[U]] {perm = array<i64: 1, 0>} : (tensor<1x100xf32>) -> tensor<100x1xf32>
// CHECK-NEXT:    %[[PU:[a-zA-Z0-9_]+]] = ml.matmul %[[PT]], %[[UT]] : (tensor<1x100xf32>, tensor<100x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[ET:[a-zA-Z0-9_]+]] = ml.transpose %[[E]] {perm = array<i64: 1, 0>} : (tensor<100x1xf32>) -> tensor<1x100xf32>
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[PU]], %[[ET]] : (tensor<1x1xf32>, tensor<1x100xf32>) -> tensor<1x100xf32>
// CHECK-NEXT:    func.return %[[R]]

// LOC-LABEL:   func.func @through_transpose
// LOC-COUNT-5:   {{.*}} loc(fused["t.py":1:1, "t.py":2:1, "t.py":3:1])
func.func @through_transpose(%e: tensor<100x1xf32>, %u: tensor<1x100xf32>, %p: tensor<100x1xf32>) -> tensor<1x100xf32> {
  %eu = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<1x100xf32>) -> tensor<100x100xf32> loc("t.py":3:1)
  %eup = ml.matmul %eu, %p : (tensor<100x100xf32>, tensor<100x1xf32>) -> tensor<100x1xf32> loc("t.py":2:1)
  %t = ml.transpose %eup {perm = array<i64: 1, 0>} : (tensor<100x1xf32>) -> tensor<1x100xf32> loc("t.py":1:1)
  func.return %t : tensor<1x100xf32>
}

// -----

// Transposed leaves only, in the cheapest order: left alone. Building the product
// transposed instead, (e @ (u @ p))^T, would copy it.

// CHECK-LABEL: func.func @transposed_leaves
// CHECK-NEXT:    ml.transpose
// CHECK-NEXT:    ml.transpose
// CHECK-NEXT:    ml.transpose
// CHECK-NEXT:    %[[PU:[a-zA-Z0-9_]+]] = ml.matmul %pt, %ut
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[PU]], %et
// CHECK-NEXT:    func.return %[[R]]
func.func @transposed_leaves(%e: tensor<100x1xf32>, %u: tensor<1x100xf32>, %p: tensor<100x1xf32>) -> tensor<1x100xf32> {
  %pt = ml.transpose %p {perm = array<i64: 1, 0>} : (tensor<100x1xf32>) -> tensor<1x100xf32>
  %ut = ml.transpose %u {perm = array<i64: 1, 0>} : (tensor<1x100xf32>) -> tensor<100x1xf32>
  %et = ml.transpose %e {perm = array<i64: 1, 0>} : (tensor<100x1xf32>) -> tensor<1x100xf32>
  %ptut = ml.matmul %pt, %ut : (tensor<1x100xf32>, tensor<100x1xf32>) -> tensor<1x1xf32>
  %r = ml.matmul %ptut, %et : (tensor<1x1xf32>, tensor<1x100xf32>) -> tensor<1x100xf32>
  func.return %r : tensor<1x100xf32>
}

// -----

// A^T @ B^T stays: one product, its operands' transposes are free.

// CHECK-LABEL: func.func @both_operands_transposed
// CHECK-NEXT:    %[[AT:[a-zA-Z0-9_]+]] = ml.transpose %a
// CHECK-NEXT:    %[[BT:[a-zA-Z0-9_]+]] = ml.transpose %b
// CHECK-NEXT:    %[[C:[a-zA-Z0-9_]+]] = ml.matmul %[[AT]], %[[BT]]
// CHECK-NEXT:    func.return %[[C]]
func.func @both_operands_transposed(%a: tensor<64x32xf32>, %b: tensor<48x64xf32>) -> tensor<32x48xf32> {
  %at = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %bt = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<48x64xf32>) -> tensor<64x48xf32>
  %c = ml.matmul %at, %bt : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  func.return %c : tensor<32x48xf32>
}

// -----

// A transposed product inside a chain of equal cost in every order: the transpose
// moves to the leaves, (A @ B)^T @ C = B^T @ A^T @ C (associated to the right, the
// planner's choice between equals), and no product is copied.

// CHECK-LABEL: func.func @inner_transpose_moves_to_the_leaves
// CHECK-NEXT:    %[[BT:[a-zA-Z0-9_]+]] = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[AT:[a-zA-Z0-9_]+]] = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[AC:[a-zA-Z0-9_]+]] = ml.matmul %[[AT]], %c
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[BT]], %[[AC]]
// CHECK-NEXT:    func.return %[[R]]
func.func @inner_transpose_moves_to_the_leaves(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %ab = ml.matmul %a, %b : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = ml.transpose %ab {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = ml.matmul %t, %c : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r : tensor<8x8xf32>
}

// -----

// Scalars: alpha * ((e @ u) @ p) * beta becomes e @ ((alpha * beta) * (u @ p)): the
// scalars are multiplied together once and applied to the 1x1 intermediate.

// CHECK-LABEL: func.func @with_scalars
// CHECK-SAME:    (%[[E:[a-zA-Z0-9_]+]]: tensor<100x1xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x100xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<100x1xf32>, %[[A:[a-zA-Z0-9_]+]]: tensor<f32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x1xf32>)
// CHECK-NEXT:    %[[S:[a-zA-Z0-9_]+]] = ml.mul %{{.*}}, %{{.*}} : (tensor<{{.*}}>, tensor<{{.*}}>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[UP:[a-zA-Z0-9_]+]] = ml.matmul %[[U]], %[[P]]
// CHECK-NEXT:    %[[SUP:[a-zA-Z0-9_]+]] = ml.mul %[[S]], %[[UP]] : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.matmul %[[E]], %[[SUP]] : (tensor<100x1xf32>, tensor<1x1xf32>) -> tensor<100x1xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @with_scalars(%e: tensor<100x1xf32>, %u: tensor<1x100xf32>, %p: tensor<100x1xf32>, %alpha: tensor<f32>, %beta: tensor<1x1xf32>) -> tensor<100x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<1x100xf32>) -> tensor<100x100xf32>
  %aeu = ml.mul %alpha, %eu : (tensor<f32>, tensor<100x100xf32>) -> tensor<100x100xf32>
  %eup = ml.matmul %aeu, %p : (tensor<100x100xf32>, tensor<100x1xf32>) -> tensor<100x1xf32>
  %r = ml.mul %eup, %beta : (tensor<100x1xf32>, tensor<1x1xf32>) -> tensor<100x1xf32>
  func.return %r : tensor<100x1xf32>
}

// -----

// A product scaled where it is already cheapest, in a loop body, stays as written.

// CHECK-LABEL: func.func @scalar_already_placed
// CHECK:         scf.for
// CHECK-NEXT:      %[[UP:[a-zA-Z0-9_]+]] = ml.matmul
// CHECK-NEXT:      %[[SUP:[a-zA-Z0-9_]+]] = ml.mul %{{.*}}, %[[UP]]
// CHECK-NEXT:      ml.matmul %{{.*}}, %[[SUP]]
func.func @scalar_already_placed(%e: tensor<100x1xf32>, %u: tensor<1x100xf32>, %p0: tensor<100x1xf32>, %s: tensor<f32>, %n: index) -> tensor<100x1xf32> {
  %lo = arith.constant 0 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %n step %step iter_args(%p = %p0) -> (tensor<100x1xf32>) {
    %up = ml.matmul %u, %p : (tensor<1x100xf32>, tensor<100x1xf32>) -> tensor<1x1xf32>
    %sup = ml.mul %s, %up : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %next = ml.matmul %e, %sup : (tensor<100x1xf32>, tensor<1x1xf32>) -> tensor<100x1xf32>
    scf.yield %next : tensor<100x1xf32>
  }
  func.return %r : tensor<100x1xf32>
}
