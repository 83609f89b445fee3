"""
Three real ONNX models, built with onnx.helper and seeded random weights.

    mlp()                     64x784 -> 1024 -> 1024 -> 10, Gemm + Relu
    cnn(batch=1)              ResNet-style: conv, batch norm, relu, max pool, two residual
                              blocks, global average pool, gemm; 3x32x32 -> 10
    transformer_block(seq=128, hidden=256, heads=4)
                              pre-norm encoder block: LayerNorm, multi-head attention
                              (softmax), GELU MLP, residual adds; written as PyTorch
                              exports it, with a Shape -> Gather -> Unsqueeze -> Concat ->
                              Reshape subgraph for the head split

Each function returns an `onnx.ModelProto` (opset 17). `python examples/onnx_models.py
DIR` writes them to DIR as mlp.onnx, cnn.onnx and transformer_block.onnx.
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class GraphBuilder:
    """Collects nodes and seeded initializers of one graph."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def weight(self, name: str, shape: tuple[int, ...], fan_in: int | None = None) -> str:
        scale = 1.0 / np.sqrt(fan_in if fan_in else shape[-1])
        data = self.rng.uniform(-scale, scale, size=shape).astype(np.float32)
        return self.const(name, data)

    def const(self, name: str, data: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def node(self, op_type: str, inputs: list[str], name: str, **attrs: object) -> str:
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def model(
        self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto]
    ) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mlc-examples"
        )
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


def mlp() -> onnx.ModelProto:
    """A 784 -> 1024 -> 1024 -> 10 perceptron on a batch of 64."""
    b = GraphBuilder(seed=0)
    x = "input"
    for i, (fan_in, fan_out) in enumerate([(784, 1024), (1024, 1024), (1024, 10)]):
        w = b.weight(f"fc{i + 1}.weight", (fan_out, fan_in))
        bias = b.weight(f"fc{i + 1}.bias", (fan_out,), fan_in)
        x = b.node("Gemm", [x, w, bias], f"fc{i + 1}", transB=1)
        if i < 2:
            x = b.node("Relu", [x], f"relu{i + 1}")
    return b.model(
        "mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [64, 784])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [64, 10])],
    )


def _conv_bn(b: GraphBuilder, x: str, name: str, c_in: int, c_out: int, stride: int = 1) -> str:
    w = b.weight(f"{name}.weight", (c_out, c_in, 3, 3), c_in * 9)
    x = b.node("Conv", [x, w], name, pads=[1, 1, 1, 1], strides=[stride, stride])
    scale = b.const(f"{name}.bn.scale", b.rng.uniform(0.5, 1.5, c_out).astype(np.float32))
    shift = b.const(f"{name}.bn.bias", b.rng.uniform(-0.1, 0.1, c_out).astype(np.float32))
    mean = b.const(f"{name}.bn.mean", b.rng.uniform(-0.1, 0.1, c_out).astype(np.float32))
    var = b.const(f"{name}.bn.var", b.rng.uniform(0.5, 1.5, c_out).astype(np.float32))
    return b.node("BatchNormalization", [x, scale, shift, mean, var], f"{name}.bn")


def _residual(b: GraphBuilder, x: str, name: str, channels: int) -> str:
    y = b.node("Relu", [_conv_bn(b, x, f"{name}.conv1", channels, channels)], f"{name}.relu1")
    y = _conv_bn(b, y, f"{name}.conv2", channels, channels)
    return b.node("Relu", [b.node("Add", [y, x], f"{name}.add")], f"{name}.relu2")


def cnn(batch: int = 1) -> onnx.ModelProto:
    """A small ResNet: stem, max pool, two residual stages, global pool, classifier."""
    b = GraphBuilder(seed=1)
    x = b.node("Relu", [_conv_bn(b, "input", "stem", 3, 16)], "stem.relu")
    x = b.node("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2])
    x = _residual(b, x, "layer1", 16)
    x = b.node("Relu", [_conv_bn(b, x, "down", 16, 32, stride=2)], "down.relu")
    x = _residual(b, x, "layer2", 32)
    x = b.node("GlobalAveragePool", [x], "gap")
    x = b.node("Flatten", [x], "flatten", axis=1)
    w, bias = b.weight("fc.weight", (10, 32)), b.weight("fc.bias", (10,), 32)
    x = b.node("Gemm", [x, w, bias], "fc", transB=1)
    return b.model(
        "cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 32, 32])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, 10])],
    )


def _linear(b: GraphBuilder, x: str, name: str, fan_in: int, fan_out: int) -> str:
    w = b.weight(f"{name}.weight", (fan_in, fan_out), fan_in)
    bias = b.weight(f"{name}.bias", (fan_out,), fan_in)
    return b.node("Add", [b.node("MatMul", [x, w], f"{name}.matmul"), bias], name)


def _layer_norm(b: GraphBuilder, x: str, name: str, hidden: int) -> str:
    scale = b.const(f"{name}.weight", b.rng.uniform(0.5, 1.5, hidden).astype(np.float32))
    shift = b.const(f"{name}.bias", b.rng.uniform(-0.1, 0.1, hidden).astype(np.float32))
    return b.node("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=1e-5)


def _split_heads(b: GraphBuilder, x: str, name: str, heads: int, head_dim: int) -> str:
    """(1, seq, hidden) -> (1, heads, seq, head_dim), with PyTorch's shape subgraph."""
    shape = b.node("Shape", [x], f"{name}.shape")
    seq = b.node(
        "Gather", [shape, b.const(f"{name}.one", np.array(1, np.int64))], f"{name}.seq", axis=0
    )
    seq = b.node(
        "Unsqueeze", [seq, b.const(f"{name}.axes", np.array([0], np.int64))], f"{name}.seq1"
    )
    rest = b.const(f"{name}.rest", np.array([heads, head_dim], np.int64))
    batch = b.const(f"{name}.batch", np.array([1], np.int64))
    target = b.node("Concat", [batch, seq, rest], f"{name}.target", axis=0)
    x = b.node("Reshape", [x, target], f"{name}.reshape")
    return b.node("Transpose", [x], f"{name}.heads", perm=[0, 2, 1, 3])


def _attention(b: GraphBuilder, x: str, seq: int, hidden: int, heads: int) -> str:
    head_dim = hidden // heads
    q = _split_heads(b, _linear(b, x, "attn.q", hidden, hidden), "attn.q", heads, head_dim)
    k = _split_heads(b, _linear(b, x, "attn.k", hidden, hidden), "attn.k", heads, head_dim)
    v = _split_heads(b, _linear(b, x, "attn.v", hidden, hidden), "attn.v", heads, head_dim)
    kt = b.node("Transpose", [k], "attn.kt", perm=[0, 1, 3, 2])
    scores = b.node("MatMul", [q, kt], "attn.scores")
    scale = b.const("attn.scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    probs = b.node(
        "Softmax", [b.node("Mul", [scores, scale], "attn.scaled")], "attn.softmax", axis=-1
    )
    context = b.node(
        "Transpose", [b.node("MatMul", [probs, v], "attn.context")], "attn.merge", perm=[0, 2, 1, 3]
    )
    merged = b.node(
        "Reshape",
        [context, b.const("attn.shape", np.array([1, seq, hidden], np.int64))],
        "attn.flat",
    )
    return _linear(b, merged, "attn.out", hidden, hidden)


def _gelu(b: GraphBuilder, x: str, name: str) -> str:
    """GELU as PyTorch exports it before opset 20: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    root2 = b.const(f"{name}.sqrt2", np.array(np.sqrt(2.0), np.float32))
    one, half = (
        b.const(f"{name}.one", np.array(1.0, np.float32)),
        b.const(f"{name}.half", np.array(0.5, np.float32)),
    )
    erf = b.node("Erf", [b.node("Div", [x, root2], f"{name}.div")], f"{name}.erf")
    gate = b.node("Mul", [b.node("Add", [erf, one], f"{name}.add"), half], f"{name}.gate")
    return b.node("Mul", [x, gate], name)


def transformer_block(seq: int = 128, hidden: int = 256, heads: int = 4) -> onnx.ModelProto:
    """A pre-norm encoder block on a (1, seq, hidden) input."""
    b = GraphBuilder(seed=2)
    x = "input"
    attended = _attention(b, _layer_norm(b, x, "ln1", hidden), seq, hidden, heads)
    x = b.node("Add", [x, attended], "residual1")
    h = _linear(b, _layer_norm(b, x, "ln2", hidden), "mlp.fc1", hidden, 4 * hidden)
    h = _linear(b, _gelu(b, h, "mlp.gelu"), "mlp.fc2", 4 * hidden, hidden)
    out = b.node("Add", [x, h], "residual2")
    return b.model(
        "transformer_block",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, seq, hidden])],
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python examples/onnx_models.py DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, model in [("mlp", mlp()), ("cnn", cnn()), ("transformer_block", transformer_block())]:
        onnx.save(model, folder / f"{name}.onnx")
        print(folder / f"{name}.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
