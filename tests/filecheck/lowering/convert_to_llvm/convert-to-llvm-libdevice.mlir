// RUN: mlc-opt %s -p "convert-to-llvm{libdevice=true}" | filecheck %s
// RUN: mlc-opt %s -p "convert-to-llvm{libdevice=true}" | mlc-opt --verify-roundtrip > /dev/null

// For GPU kernels (convert-gpu-to-nvvm runs the pass so), f32 and f16 exp, tanh and erf
// are calls that the PTX translation redirects to libdevice (`__nv_expf`, ...), not
// the inline polynomials of the host; f16 goes through f32 for erf. f64 is as on the host.

// CHECK:       llvm.func @erff(f32) -> f32
// CHECK-LABEL: llvm.func @kernel_math(%x: f32, %h: f16, %d: f64)
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.exp.f32"(%x) : (f32) -> f32
// CHECK-NEXT:    %[[EH:.*]] = llvm.call_intrinsic "llvm.exp.f16"(%h) : (f16) -> f16
// CHECK-NEXT:    %[[T:.*]] = llvm.call_intrinsic "llvm.tanh.f32"(%x) : (f32) -> f32
// CHECK-NEXT:    %[[R:.*]] = llvm.call @erff(%x) : (f32) -> f32
// CHECK-NEXT:    %[[W:.*]] = llvm.fpext %h : f16 to f32
// CHECK-NEXT:    %[[RW:.*]] = llvm.call @erff(%[[W]]) : (f32) -> f32
// CHECK-NEXT:    %[[RH:.*]] = llvm.fptrunc %[[RW]] : f32 to f16
// CHECK-NEXT:    %[[D:.*]] = llvm.call_intrinsic "llvm.exp.f64"(%d) : (f64) -> f64
// CHECK-NOT:     llvm.call_intrinsic "llvm.roundeven
// CHECK:         llvm.return
func.func @kernel_math(%x: f32, %h: f16, %d: f64) -> (f32, f16, f32, f16, f64, f32) {
  %e = math.exp %x : f32
  %eh = math.exp %h : f16
  %t = math.tanh %x : f32
  %r = math.erf %x : f32
  %rh = math.erf %h : f16
  %ed = math.exp %d : f64
  func.return %e, %eh, %r, %rh, %ed, %t : f32, f16, f32, f16, f64, f32
}
