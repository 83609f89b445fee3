// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A convolution's input cotangent is a convolution of the spread, padded cotangent
// with the flipped weights (in and out channels swapped per group); the weights' is a
// convolution too: the input with its batch and channels swapped (per group) convolved
// with the cotangent as weights, stride and dilation swapped, the input's pads kept;
// the bias's a sum. Every backward op is at the convolution's location.

// CHECK-LABEL: func.func @conv_vjp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x2x6xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<4x1x3xf32>, %{{.+}}: tensor<4xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<1x4x3xf32>)
// CHECK:         %[[FLIP:.+]] = ml.slice %{{.+}} {starts = array<i64: 0, 0, 2>, ends = array<i64: 9223372036854775807, 9223372036854775807, -4>, steps = array<i64: 1, 1, -1>} : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT:    %[[GX:.+]] = ml.conv1d %{{.+}}, %[[FLIP]] {groups = 2 : i64} : (tensor<1x4x8xf32>, tensor<2x2x3xf32>) -> tensor<1x2x6xf32>
// CHECK-NEXT:    %[[XG:.+]] = ml.reshape %[[X]] : (tensor<1x2x6xf32>) -> tensor<1x2x1x6xf32>
// CHECK-NEXT:    %[[XT:.+]] = ml.transpose %[[XG]] {perm = array<i64: 2, 1, 0, 3>}
// CHECK-NEXT:    %[[IMAGES:.+]] = ml.reshape %[[XT]] : (tensor<1x2x1x6xf32>) -> tensor<1x2x6xf32>
// CHECK-NEXT:    %[[CTT:.+]] = ml.transpose %[[CT]] {perm = array<i64: 1, 0, 2>} : (tensor<1x4x3xf32>) -> tensor<4x1x3xf32>
// CHECK-NEXT:    %[[P:.+]] = ml.conv1d %[[IMAGES]], %[[CTT]] {dilations = array<i64: 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x2x6xf32>, tensor<4x1x3xf32>) -> tensor<1x4x3xf32>
// CHECK-NEXT:    %[[GW:.+]] = ml.transpose %[[P]] {perm = array<i64: 1, 0, 2>} : (tensor<1x4x3xf32>) -> tensor<4x1x3xf32>
// CHECK-NEXT:    %[[GB:.+]] = ml.reduce_sum %[[CT]] {axes = array<i64: 0, 2>, keepdims = false}
// CHECK-NEXT:    func.return %[[GX]], %[[GW]], %[[GB]]

// LOC-LABEL:   func.func @conv_vjp
// LOC:           ml.conv1d {{.*}} loc("net.py":4:8)
// LOC:           ml.conv1d %{{.+}}, %{{.+}} {dilations = {{.*}} loc("net.py":4:8)
func.func @conv(%x: tensor<1x2x6xf32>, %w: tensor<4x1x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x3xf32> {
  %y = ml.conv1d %x, %w, %b {strides = array<i64: 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x2x6xf32>, tensor<4x1x3xf32>, tensor<4xf32>) -> tensor<1x4x3xf32> loc("net.py":4:8)
  func.return %y : tensor<1x4x3xf32>
}

// -----

// A stride that leaves input elements past the last window: the weights' convolution
// reaches further than the kernel (3x3 here) and is cropped to it (2x2).

// CHECK-LABEL: func.func @conv_strided_weight_vjp
// CHECK:         %[[P:.+]] = ml.conv2d %{{.+}}, %{{.+}} {dilations = array<i64: 3, 3>} : (tensor<1x1x6x6xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
// CHECK-NEXT:    %[[K:.+]] = ml.slice %[[P]] {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 9223372036854775807, 9223372036854775807, 2, 2>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[GW:.+]] = ml.transpose %[[K]] {perm = array<i64: 1, 0, 2, 3>}
// CHECK-NEXT:    func.return %{{.+}}, %[[GW]]
func.func @conv_strided_weight(%x: tensor<1x1x6x6xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %y = ml.conv2d %x, %w {strides = array<i64: 3, 3>} : (tensor<1x1x6x6xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// -----

// Max pooling routes each window's cotangent to the first element equal to its
// maximum. Where the windows tile the input (stride = kernel) that element is the
// window's argmax: the input (cropped to whole windows) viewed as windows, one argmax
// each, and the cotangent selected where a window position equals it, in the input's
// layout; the element past the last window gets zero.

// CHECK-LABEL: func.func @max_pool_vjp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x1x5xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<1x1x2xf32>)
// CHECK:         %[[Y:.+]] = ml.max_pool1d %[[X]]
// CHECK-NEXT:    %[[XC:.+]] = ml.slice %[[X]] {starts = array<i64: 0, 0, 0>, ends = array<i64: 9223372036854775807, 9223372036854775807, 4>, steps = array<i64: 1, 1, 1>} : (tensor<1x1x5xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT:    %[[W:.+]] = ml.reshape %[[XC]] : (tensor<1x1x4xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[I:.+]] = ml.argmax %[[W]] {axis = 3 : i64, keepdims = false} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2xi64>
// CHECK-NEXT:    %[[IR:.+]] = ml.reshape %[[I]] : (tensor<1x1x2xi64>) -> tensor<1x1x2x1xi64>
// CHECK-NEXT:    %[[P:.+]] = arith.constant dense<{{\[\[\[\[}}0, 1]]]]> : tensor<1x1x1x2xi64>
// CHECK-NEXT:    %[[HIT:.+]] = ml.cmp "eq", %[[IR]], %[[P]] : (tensor<1x1x2x1xi64>, tensor<1x1x1x2xi64>) -> tensor<1x1x2x2xi1>
// CHECK-NEXT:    %[[CTR:.+]] = ml.reshape %[[CT]] : (tensor<1x1x2xf32>) -> tensor<1x1x2x1xf32>
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[S:.+]] = ml.select %[[HIT]], %[[CTR]], %[[ZERO]] : (tensor<1x1x2x2xi1>, tensor<1x1x2x1xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[T:.+]] = ml.reshape %[[S]] : (tensor<1x1x2x2xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT:    %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<1x1x1xf32>
// CHECK-NEXT:    %[[G:.+]] = ml.concat %[[T]], %[[Z]] {axis = 2 : i64}
// CHECK-NEXT:    func.return %[[G]]

// LOC-LABEL:   func.func @max_pool_vjp
// LOC:           ml.argmax {{.*}} loc("net.py":9:3)
// LOC:           ml.cmp {{.*}} loc("net.py":9:3)
func.func @max_pool(%x: tensor<1x1x5xf32>) -> tensor<1x1x2xf32> {
  %y = ml.max_pool1d %x {kernel = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x1x5xf32>) -> tensor<1x1x2xf32> loc("net.py":9:3)
  func.return %y : tensor<1x1x2xf32>
}

// -----

// Overlapping windows (stride 1): each position's part is put back where it read, and
// the parts add up.

// CHECK-LABEL: func.func @max_pool_overlapping_vjp
// CHECK-NOT:     ml.reshape
// CHECK:         %[[G:.+]] = ml.add
// CHECK-NEXT:    func.return %[[G]]
func.func @max_pool_overlapping(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
  %y = ml.max_pool1d %x {kernel = array<i64: 2>, strides = array<i64: 1>} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
  func.return %y : tensor<1x1x3xf32>
}

// -----

// Average pooling divides by the number of elements each window covers (the padding
// not counted), then puts the quotient back under each kernel position.

// CHECK-LABEL: func.func @avg_pool_vjp
// CHECK-SAME:    (%{{.+}}: tensor<1x1x3xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<1x1x3xf32>)
// CHECK:         %[[COUNT:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 2.000000e+00]]]> : tensor<1x1x3xf32>
// CHECK-NEXT:    %[[Q:.+]] = ml.div %[[CT]], %[[COUNT]]
func.func @avg_pool(%x: tensor<1x1x3xf32>) -> tensor<1x1x3xf32> {
  %y = ml.avg_pool1d %x {kernel = array<i64: 2>, pads = array<i64: 1, 0>} : (tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  func.return %y : tensor<1x1x3xf32>
}

// -----

// A dynamic batch: the zero blocks that spread and pad the cotangent take the batch
// from the value they extend (tensor.dim at run time), the reshapes infer it (-1), and
// the weights' matmul contracts over batch x positions (?).

// CHECK-LABEL: func.func @conv_dynamic_batch_vjp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x1x3x3xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<2x1x2x2xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<?x2x2x2xf32>)
// CHECK:         %[[COLUMN:.+]] = ml.reshape %[[CT]], %{{.+}} : (tensor<?x2x2x2xf32>, tensor<5xi64>) -> tensor<?x2x2x1x2xf32>
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.+]] = tensor.dim %[[COLUMN]], %[[ZERO]]
// CHECK:         %[[SHAPE:.+]] = tensor.from_elements
// CHECK:         %[[GAP:.+]] = ml.broadcast_to %{{.+}}, %[[SHAPE]] : (tensor<f32>, tensor<5xi64>) -> tensor<?x2x2x1x2xf32>
// CHECK-NEXT:    ml.concat %[[COLUMN]], %[[GAP]] {axis = 3 : i64}
// CHECK:         %[[GX:.+]] = ml.conv2d %{{.+}}, %{{.+}} : (tensor<?x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<?x1x3x3xf32>
// CHECK:         %[[GW:.+]] = ml.matmul %{{.+}}, %{{.+}} : (tensor<1x2x?xf32>, tensor<1x?x4xf32>) -> tensor<1x2x4xf32>
// CHECK-NEXT:    %[[GWR:.+]] = ml.reshape %[[GW]] : (tensor<1x2x4xf32>) -> tensor<2x1x2x2xf32>
// CHECK-NEXT:    func.return %[[GX]], %[[GWR]]

// LOC-LABEL:   func.func @conv_dynamic_batch_vjp
// LOC:           tensor.dim {{.*}} loc("cnn.py":9:7)
func.func @conv_dynamic_batch(%x: tensor<?x1x3x3xf32>, %w: tensor<2x1x2x2xf32>) -> tensor<?x2x2x2xf32> {
  %y = ml.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : (tensor<?x1x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<?x2x2x2xf32> loc("cnn.py":9:7)
  func.return %y : tensor<?x2x2x2xf32>
}

// -----

// 2-D windows that tile the input: the windows are gathered on the last dims by one
// transpose before the argmax; positions count row-major over the window.

// CHECK-LABEL: func.func @max_pool_2d_tiled_vjp
// CHECK:         %[[W:.+]] = ml.reshape %{{.+}} : (tensor<2x3x4x6xf32>) -> tensor<2x3x2x2x3x2xf32>
// CHECK-NEXT:    %[[T:.+]] = ml.transpose %[[W]] {perm = array<i64: 0, 1, 2, 4, 3, 5>}
// CHECK-NEXT:    %[[F:.+]] = ml.reshape %[[T]] : (tensor<2x3x2x3x2x2xf32>) -> tensor<2x3x2x3x4xf32>
// CHECK-NEXT:    ml.argmax %[[F]] {axis = 4 : i64, keepdims = false}
// CHECK:         arith.constant dense<{{\[\[\[\[\[\[}}0, 1]], {{\[\[}}2, 3]]]]]]> : tensor<1x1x1x2x1x2xi64>
// CHECK:         %[[G:.+]] = ml.reshape %{{.+}} : (tensor<2x3x2x2x3x2xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT:    func.return %[[G]]
func.func @max_pool_2d_tiled(%x: tensor<2x3x4x6xf32>) -> tensor<2x3x2x3xf32> {
  %y = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x6xf32>) -> tensor<2x3x2x3xf32>
  func.return %y : tensor<2x3x2x3xf32>
}
