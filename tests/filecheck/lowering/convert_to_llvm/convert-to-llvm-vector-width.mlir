// RUN: mlc-opt %s -p 'convert-to-llvm{vector-bits=512}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-to-llvm{vector-bits=512}' | mlc-translate --mlir-to-llvmir | filecheck %s --check-prefix=IR
// RUN: mlc-opt %s -p 'convert-to-llvm{vector-bits=256}' | filecheck %s --check-prefix=NARROW

// On a host with 512-bit vectors, the functions that run 512-bit FMAs (@inline_tile)
// or call a function kept out of line that does (@tile_loop calls the shared @kernel)
// let LLVM vectorise at 512 bits: `passthrough` holds ("prefer-vector-width", "512"),
// which the LLVM IR translation writes as the string attribute. A function that only
// calls one of those through an outlined body (@outer), or whose FMAs are narrower
// (@narrow), keeps LLVM's default. Where the widest vector is 256 bits, nothing is
// marked (LLVM prefers 256 bits anyway).

// CHECK:       llvm.func internal @kernel({{.*}}passthrough = {{\[}}["prefer-vector-width", "512"]]
// CHECK:       llvm.func internal @tile_loop({{.*}}passthrough = {{\[}}["prefer-vector-width", "512"]]
// CHECK:       llvm.func @outer({{[^{]*}}{{\{$}}
// CHECK:       llvm.func @inline_tile({{.*}}passthrough = {{\[}}["prefer-vector-width", "512"]]
// CHECK:       llvm.func @narrow({{[^{]*}}{{\{$}}

// IR:          define internal <16 x float> @"kernel"({{.*}}) "prefer-vector-width"="512" noinline
// IR:          define internal void @"tile_loop"({{.*}}) "prefer-vector-width"="512"
// IR:          define void @"outer"({{.*}}){{$}}
// IR:          define <16 x float> @"inline_tile"({{.*}}) "prefer-vector-width"="512"
// IR:          define <8 x float> @"narrow"({{.*}}){{$}}

// NARROW-NOT:  passthrough

func.func private @kernel(%a: vector<16xf32>, %b: vector<16xf32>) -> vector<16xf32> attributes {no_inline} {
  %c = vector.fma %a, %b, %a : vector<16xf32>
  func.return %c : vector<16xf32>
}

func.func private @tile_loop(%a: vector<16xf32>, %out: memref<16xf32>) {
  %c = func.call @kernel(%a, %a) : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
  %zero = arith.constant 0 : index
  vector.store %c, %out[%zero] : memref<16xf32>, vector<16xf32>
  func.return
}

func.func @outer(%a: vector<16xf32>, %out: memref<16xf32>) {
  func.call @tile_loop(%a, %out) : (vector<16xf32>, memref<16xf32>) -> ()
  func.return
}

func.func @inline_tile(%a: vector<16xf32>) -> vector<16xf32> {
  %c = vector.fma %a, %a, %a : vector<16xf32>
  func.return %c : vector<16xf32>
}

func.func @narrow(%a: vector<8xf32>) -> vector<8xf32> {
  %c = vector.fma %a, %a, %a : vector<8xf32>
  func.return %c : vector<8xf32>
}
