// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p autodiff-partition

// A joint function the split cannot take: each is an error at the function.


// expected-error @+1 {{has a malformed ml.joint attribute: expected a count 'values' >= 0}}
func.func @malformed(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> tensor<5xf32>
    attributes {ml.joint = {cotangents = 1 : i64}} {
  func.return %ct : tensor<5xf32>
}

// -----

// expected-error @+1 {{ml.joint names 3 cotangents, but it has 2 arguments}}
func.func @too_many_cotangents(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> tensor<5xf32>
    attributes {ml.joint = {cotangents = 3 : i64, values = 0 : i64}} {
  func.return %ct : tensor<5xf32>
}

// -----

// expected-error @+1 {{cannot be split: value #0 depends on a cotangent}}
func.func @value_reads_cotangent(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
    attributes {ml.joint = {cotangents = 1 : i64, values = 1 : i64}} {
  %y = ml.mul %x, %ct : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  func.return %y, %ct : tensor<5xf32>, tensor<5xf32>
}

// -----

func.func @j_forward(%x: tensor<5xf32>) -> tensor<5xf32> {
  func.return %x : tensor<5xf32>
}

// expected-error @+1 {{cannot add @j_forward: the module already has a symbol of that name}}
func.func @j(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> tensor<5xf32>
    attributes {ml.joint = {cotangents = 1 : i64, values = 0 : i64}} {
  func.return %ct : tensor<5xf32>
}
