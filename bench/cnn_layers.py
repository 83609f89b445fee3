"""
Single CNN layers of the shapes real models have, each compiled alone, mlc against
onnxruntime in one process, alternating in bursts (`cpu.bursts`), medians: the rows the
zoo's per-layer profiles pointed at (narrow output rows, a 7x7 stride-2 stem, 2x2
outputs, a stride-2 max pool, padded depthwise convolutions with bias and ReLU on large
and small images, convolutions with one output pixel).

    PYTHONPATH=. .venv/bin/python bench/cnn_layers.py [--threads 1] [--budget 2] [--only TEXT]

Run it once per tree to compare (`PYTHONPATH=<tree>`): the machine's load moves absolute
times more than the ratio. Prints one line per layer: mlc and onnxruntime medians (us)
and onnxruntime / mlc (above 1: mlc faster).
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).parent))

import cpu


def _conv(
    shape: tuple[int, ...], out: int, kernel: int, stride: int, pad: int, groups: int = 1
) -> list:
    c = shape[1]
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((out, c // groups, kernel, kernel)).astype(np.float32)
    bias = rng.standard_normal(out).astype(np.float32)
    attrs = dict(strides=[stride] * 2, pads=[pad] * 4, kernel_shape=[kernel] * 2, group=groups)
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["t"], **attrs),
        helper.make_node("Relu", ["t"], ["y"]),
    ]
    return [nodes, [numpy_helper.from_array(weight, "W"), numpy_helper.from_array(bias, "B")]]


def _max_pool(kernel: int, stride: int, pad: int) -> list:
    attrs = dict(strides=[stride] * 2, pads=[pad] * 4, kernel_shape=[kernel] * 2)
    return [[helper.make_node("MaxPool", ["x"], ["y"], **attrs)], []]


# name, input shape, (nodes, initializers)
LAYERS = [
    ("3x3 conv, rows of 8 (64 -> 8 channels)", (8, 64, 8, 8), _conv((8, 64, 8, 8), 8, 3, 1, 1)),
    ("7x7 stride-2 stem", (8, 3, 32, 32), _conv((8, 3, 32, 32), 64, 7, 2, 3)),
    ("3x3 conv, 2x2 output", (8, 32, 2, 2), _conv((8, 32, 2, 2), 32, 3, 1, 1)),
    ("3x3 stride-2 max pool", (8, 64, 16, 16), _max_pool(3, 2, 1)),
    ("3x3 depthwise, bias, relu", (1, 96, 28, 28), _conv((1, 96, 28, 28), 96, 3, 1, 1, 96)),
    ("3x3 depthwise 8x8, bias, relu", (8, 48, 8, 8), _conv((8, 48, 8, 8), 48, 3, 1, 1, 48)),
    ("3x3 depthwise 4x4, bias, relu", (8, 48, 4, 4), _conv((8, 48, 4, 4), 48, 3, 1, 1, 48)),
    ("3x3 depthwise 2x2, bias, relu", (8, 144, 2, 2), _conv((8, 144, 2, 2), 144, 3, 1, 1, 144)),
    (
        "3x3 depthwise stride 2, bias, relu",
        (8, 48, 16, 16),
        _conv((8, 48, 16, 16), 48, 3, 2, 1, 48),
    ),
    ("5x5 depthwise stride 2, bias, relu", (8, 48, 8, 8), _conv((8, 48, 8, 8), 48, 5, 2, 2, 48)),
    ("1x1 conv of a 1x1 image (80 -> 1280)", (8, 80, 1, 1), _conv((8, 80, 1, 1), 1280, 1, 1, 0)),
    ("3x3 conv of a 1x1 image (64 -> 64)", (8, 64, 1, 1), _conv((8, 64, 1, 1), 64, 3, 1, 1)),
]


def _model(path: Path, shape: tuple[int, ...], nodes: list, weights: list) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    graph = helper.make_graph(nodes, path.stem, [x], [], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inferred = onnx.shape_inference.infer_shapes(model)
    model.graph.output.extend(v for v in inferred.graph.value_info if v.name == "y")
    onnx.save(model, str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="threads of both systems")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per layer")
    parser.add_argument("--only", default="", help="the layers whose name holds this text")
    args = parser.parse_args()
    os.environ["MLC_NUM_THREADS"] = str(args.threads)
    import onnxruntime  # a benchmark dependency, not mlc's

    import mlc

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    rng = np.random.default_rng()
    with tempfile.TemporaryDirectory() as folder:
        for name, shape, (nodes, weights) in LAYERS:
            if args.only not in name:
                continue
            path = Path(folder) / "layer.onnx"
            _model(path, shape, nodes, weights)
            x = rng.standard_normal(shape).astype(np.float32)
            exe = mlc.compile(str(path))
            session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
            want = session.run(None, {"x": x})[0]
            np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-4)
            runs = {"mlc": lambda: exe(x), "onnxruntime": lambda: session.run(None, {"x": x})}
            settled, _ = cpu.bursts(runs, args.budget, min_runs=3, max_runs=1000)
            mlc_us, ort_us = (1e6 * statistics.median(settled[k]) for k in runs)
            print(
                f"{name:40s} {shape!s:18s} mlc {mlc_us:8.1f} us  "
                f"onnxruntime {ort_us:8.1f} us  {ort_us / mlc_us:.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
