"""
ResNet-50 (He et al., torchvision's layout) as an ONNX model with seeded random weights,
built with onnx.helper: no torch, no download.

    resnet50(batch=1, image=224)   stem conv 7x7/2 + batch norm + relu + max pool 3x3/2,
                                   bottleneck stages of 3, 4, 6, 3 blocks (widths 64-512,
                                   expansion 4, stride on the 3x3 conv, a 1x1 projection
                                   on each stage's first block), global average pool, fc

53 convolutions of 21 distinct shapes (at 224x224), each followed by BatchNormalization,
as a PyTorch export without fused batch norms has them; 25.6M parameters.
`python bench/resnet50.py PATH` writes it.
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parents[1] / "examples"))
from onnx_models import GraphBuilder

STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))  # width, blocks, stride
EXPANSION = 4


class _Graph(GraphBuilder):
    """The examples' graph builder with ResNet's convolution + batch norm and bottleneck."""

    def weights(self, name: str, data: np.ndarray) -> str:
        return self.const(name, data.astype(np.float32))

    def conv_bn(
        self, x: str, name: str, c_in: int, c_out: int, kernel: int, stride: int = 1
    ) -> str:
        fan_in = c_in * kernel * kernel
        scale = np.sqrt(2.0 / fan_in)
        shape = (c_out, c_in, kernel, kernel)
        w = self.weights(f"{name}.weight", self.rng.normal(0, scale, shape))
        pad = kernel // 2
        x = self.node("Conv", [x, w], name, pads=[pad] * 4, strides=[stride, stride])
        bn = [
            self.weights(f"{name}.bn.{part}", self.rng.uniform(low, high, c_out))
            for part, low, high in (
                ("scale", 0.5, 1.5),
                ("bias", -0.1, 0.1),
                ("mean", -0.1, 0.1),
                ("var", 0.5, 1.5),
            )
        ]
        return self.node("BatchNormalization", [x, *bn], f"{name}.bn")

    def bottleneck(self, x: str, name: str, c_in: int, width: int, stride: int) -> str:
        c_out = width * EXPANSION
        y = self.node("Relu", [self.conv_bn(x, f"{name}.conv1", c_in, width, 1)], f"{name}.r1")
        y = self.node(
            "Relu", [self.conv_bn(y, f"{name}.conv2", width, width, 3, stride)], f"{name}.r2"
        )
        y = self.conv_bn(y, f"{name}.conv3", width, c_out, 1)
        if stride != 1 or c_in != c_out:
            x = self.conv_bn(x, f"{name}.downsample", c_in, c_out, 1, stride)
        return self.node("Relu", [self.node("Add", [y, x], f"{name}.add")], f"{name}.out")


def resnet50(batch: int = 1, image: int = 224, classes: int = 1000) -> onnx.ModelProto:
    """ResNet-50 on `batch` RGB images of `image` x `image`, seeded random weights."""
    g = _Graph(seed=50)
    x = g.node("Relu", [g.conv_bn("input", "stem", 3, 64, 7, 2)], "stem.relu")
    x = g.node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c_in = 64
    for stage, (width, blocks, stride) in enumerate(STAGES, start=1):
        for block in range(blocks):
            x = g.bottleneck(x, f"layer{stage}.{block}", c_in, width, stride if block == 0 else 1)
            c_in = width * EXPANSION
    x = g.node("GlobalAveragePool", [x], "gap")
    x = g.node("Flatten", [x], "flatten", axis=1)
    w = g.weights("fc.weight", g.rng.uniform(-0.02, 0.02, (classes, c_in)))
    bias = g.weights("fc.bias", g.rng.uniform(-0.02, 0.02, classes))
    x = g.node("Gemm", [x, w, bias], "fc", transB=1)
    return g.model(
        "resnet50",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, image, image])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, classes])],
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/resnet50.py PATH")
    onnx.save(resnet50(), sys.argv[1])
