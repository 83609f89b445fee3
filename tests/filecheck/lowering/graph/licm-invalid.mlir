// RUN: not mlc-opt %s -p 'licm{max-live-bytes=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not mlc-opt %s -p 'licm{max-live-bytes=1e6}' 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not mlc-opt %s -p 'licm{max-live=1}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: mlc-opt %s -p 'licm{max-live-bytes=0}' | filecheck %s --check-prefix=ZERO

// Bad options are one-line errors naming the pass and the option as the pipeline spells
// it, before any IR is touched. 0 is valid: nothing of a known size is hoisted.

// NEGATIVE-NOT: Traceback
// NEGATIVE: mlc-opt: error: pass 'licm': max-live-bytes must be 0 or more, got -1
// NEGATIVE-NOT: {{.}}
// TYPE: mlc-opt: error: pass 'licm': option 'max-live-bytes' takes an integer, got '1e6'
// UNKNOWN: mlc-opt: error: pass 'licm': unknown option 'max-live' (did you mean 'max-live-bytes'?)
// ZERO: func.func @f
func.func @f() {
  func.return
}
