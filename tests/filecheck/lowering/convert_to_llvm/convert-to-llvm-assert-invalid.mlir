// RUN: mlc-opt %s --verify-diagnostics -p convert-to-llvm

// A check inside a parallel loop may run on a pool thread, whose failure the caller
// would not see: a located error, the module untouched.

func.func @checked_rows(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %ok = arith.cmpi slt, %i, %n : index
    // expected-error @+1 {{'cf.assert' op inside scf.parallel is not supported (its failure would be lost on a pool thread)}}
    cf.assert %ok, "row in range"
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
