// RUN: mlc-opt --list-passes | filecheck %s
// RUN: mlc-opt --list-passes %s | filecheck %s

// `--list-passes` prints the name of every registered pass, one a line, sorted, and
// exits without reading the input.

// CHECK:      {{^}}canonicalize{{$}}
// CHECK:      {{^}}cse{{$}}
// CHECK:      {{^}}dce{{$}}
// CHECK-NOT:  {{^}}canonicalize{{$}}
