// RUN: mlc-opt --version | filecheck %s

// CHECK: mlc-opt {{[0-9]+\.[0-9]+\.[0-9]+}} (xDSL 0.74.{{[0-9]+}}, llvmlite {{.*}})
