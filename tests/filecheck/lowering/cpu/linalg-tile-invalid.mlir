// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=2,8,4}' 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=64,64}' 2>&1 | filecheck %s --check-prefix=TWO
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=2,6,4,4 vector-length=4}' 2>&1 | filecheck %s --check-prefix=LANES
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=2,5,4,4}' 2>&1 | filecheck %s --check-prefix=ODD
// RUN: not mlc-opt %s -p 'linalg-tile{threads=-1}' 2>&1 | filecheck %s --check-prefix=THREADS
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=0,0,0,0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=-1,8,4,4}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=2,8,0,4}' 2>&1 | filecheck %s --check-prefix=ONE-ZERO
// RUN: not mlc-opt %s -p 'linalg-tile{vector-length=-4}' 2>&1 | filecheck %s --check-prefix=VECTOR
// RUN: not mlc-opt %s -p 'linalg-tile{threads=1.5}' 2>&1 | filecheck %s --check-prefix=FLOAT
// RUN: not mlc-opt %s -p 'linalg-tile{tile-sizes=a,b}' 2>&1 | filecheck %s --check-prefix=WORDS
// RUN: not mlc-opt %s -p 'linalg-tile{row-blocks=2}' 2>&1 | filecheck %s --check-prefix=BOOL
// RUN: not mlc-opt %s -p 'linalg-tile{threads}' 2>&1 | filecheck %s --check-prefix=NO-VALUE
// RUN: not mlc-opt %s -p 'linalg-tile{tile-size=2,8,4,4}' 2>&1 | filecheck %s --check-prefix=CLOSE
// RUN: not mlc-opt %s -p 'linalg-tile{tile_size=2,8,4,4}' 2>&1 | filecheck %s --check-prefix=AS-TYPED
// RUN: not mlc-opt %s -p 'linalg-tile{blocking=2}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: mlc-opt %s -p 'linalg-tile{tile_sizes=2,8,4,4 row-blocks}' | filecheck %s --check-prefix=VALID

// Bad options are one-line errors naming the pass, before any IR is touched, and name
// each option as the pipeline spells it (`tile-sizes`; one typed with `_` as typed).
// Zero tile sizes are refused as negative ones are.

// COUNT-NOT: Traceback
// COUNT: mlc-opt: error: pass 'linalg-tile': tile-sizes takes 4 values (MR,NR,KC,MC), got 3
// COUNT-NOT: {{.}}
// TWO: mlc-opt: error: pass 'linalg-tile': tile-sizes takes 4 values (MR,NR,KC,MC), got 2
// LANES: mlc-opt: error: pass 'linalg-tile': NR (6) must be a multiple of the vector length (4)
// ODD: mlc-opt: error: pass 'linalg-tile': NR (5) must be even (two vectors) unless vector-length is given
// THREADS: mlc-opt: error: pass 'linalg-tile': threads must be 0 (the host's) or positive, got -1
// ZERO-NOT: Traceback
// ZERO: mlc-opt: error: pass 'linalg-tile': tile-sizes must be positive, got 0,0,0,0
// ZERO-NOT: {{.}}
// NEGATIVE: mlc-opt: error: pass 'linalg-tile': tile-sizes must be positive, got -1,8,4,4
// ONE-ZERO: mlc-opt: error: pass 'linalg-tile': tile-sizes must be positive, got 2,8,0,4
// VECTOR: mlc-opt: error: pass 'linalg-tile': vector-length must be 0 (the host's) or positive, got -4
// FLOAT: mlc-opt: error: pass 'linalg-tile': option 'threads' takes an integer, got '1.5'
// WORDS: mlc-opt: error: pass 'linalg-tile': option 'tile-sizes' takes a list of integers, got 'a,b'
// BOOL: mlc-opt: error: pass 'linalg-tile': option 'row-blocks' takes a bool (true or false), got '2'
// NO-VALUE: mlc-opt: error: pass 'linalg-tile': option 'threads' takes an integer, got no value
// CLOSE: mlc-opt: error: pass 'linalg-tile': unknown option 'tile-size' (did you mean 'tile-sizes'?)
// AS-TYPED: mlc-opt: error: pass 'linalg-tile': unknown option 'tile_size' (did you mean 'tile-sizes'?)
// UNKNOWN: mlc-opt: error: pass 'linalg-tile': unknown option 'blocking' (options: tile-sizes, vector-length, threads, row-blocks, shared-micro-kernels)
// VALID: func.func @f
func.func @f() {
  func.return
}
