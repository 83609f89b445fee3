// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=2,8,4}' 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=2,6,4,4 vector-length=4}' 2>&1 | filecheck %s --check-prefix=LANES
// RUN: not mlc-opt %s -p 'linalg-tile{threads=-1}' 2>&1 | filecheck %s --check-prefix=THREADS

// Bad options are one-line errors naming the pass, before any IR is touched.

// COUNT-NOT: Traceback
// COUNT: error: pass 'linalg-tile': tile-sizes takes 4 values (MR,NR,KC,MC), got 3
// LANES: error: pass 'linalg-tile': NR (6) must be a multiple of the vector length
// THREADS: error: pass 'linalg-tile': threads must be 0 (the host's) or positive, got -1
func.func @f() {
  func.return
}
