// RUN: mlc-opt --help | filecheck %s
// RUN: mlc-opt -h | filecheck %s

// `--help` prints the usage and every flag, and exits 0.

// CHECK: usage: mlc-opt
// CHECK-DAG: --passes
// CHECK-DAG: --output
// CHECK-DAG: --split-input-file
// CHECK-DAG: --verify-diagnostics
// CHECK-DAG: --remarks
// CHECK-DAG: --print-op-generic
// CHECK-DAG: --print-debuginfo
// CHECK-DAG: --print-ir-before-all
// CHECK-DAG: --print-ir-after-all
// CHECK-DAG: --allow-unregistered-dialect
// CHECK-DAG: --verify-roundtrip
// CHECK-DAG: --timing
// CHECK-DAG: --list-passes
// CHECK-DAG: --debug
// CHECK-DAG: --version
