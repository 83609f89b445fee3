"""Write small ONNX models with If, Loop and Scan into a folder (for onnx-control-flow.mlir)."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(folder, name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    onnx.save(proto, str(folder / f"{name}.onnx"))


def loop_body(cond_out):
    """acc + x, stacked; the body's condition: `cond_out` (a node making c_out)."""
    return helper.make_graph(
        [
            helper.make_node("Add", ["acc", "x"], ["acc_out"]),
            helper.make_node("Identity", ["acc_out"], ["row"]),
            cond_out,
        ],
        "body",
        [info("i", I64, []), info("c", BOOL, []), info("acc", F32, [3])],
        [info("c_out", BOOL, []), info("acc_out", F32, [3]), info("row", F32, [3])],
    )


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    zeros = numpy_helper.from_array(np.zeros(3, np.float32), "zeros")
    outputs = [info("total", F32, [3]), info("rows", F32, [None, 3])]
    passed = helper.make_node("Identity", ["c"], ["c_out"])
    loop = helper.make_node("Loop", ["m", "", "zeros"], ["total", "rows"], body=loop_body(passed))
    save(folder, "for", [loop], [info("x", F32, [3]), info("m", I64, [])], outputs, [zeros])
    small = helper.make_node("ReduceSum", ["acc_out"], ["s"], keepdims=0)
    less = helper.make_node("Less", ["s", "ten"], ["c_out"])
    body = loop_body(less)
    body.node.insert(2, small)
    body.initializer.append(numpy_helper.from_array(np.float32(10), "ten"))
    loop = helper.make_node("Loop", ["", "go", "zeros"], ["total", "rows"], body=body)
    inputs = [info("x", F32, [3]), info("go", BOOL, [])]
    save(folder, "while", [loop], inputs, outputs, [zeros])
    then = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["t"])], "then", [], [info("t", F32, [3])]
    )
    other = helper.make_graph(
        [helper.make_node("Slice", ["x", "zero", "one"], ["e"])], "else", [], [info("e", F32, [1])]
    )
    bounds = [numpy_helper.from_array(np.int64([v]), n) for n, v in (("zero", 0), ("one", 1))]
    pick = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then, else_branch=other)
    inputs = [info("c", BOOL, []), info("x", F32, [3])]
    save(folder, "if", [pick], inputs, [info("y", F32, [None])], bounds)
    step = helper.make_graph(
        [helper.make_node("Add", ["s", "xt"], ["s2"]), helper.make_node("Identity", ["s2"], ["y"])],
        "step",
        [info("s", F32, [2]), info("xt", F32, [2])],
        [info("s2", F32, [2]), info("y", F32, [2])],
    )
    scan = helper.make_node(
        "Scan", ["s0", "x"], ["s", "ys"], num_scan_inputs=1, scan_input_directions=[1], body=step
    )
    inputs = [info("s0", F32, [2]), info("x", F32, ["t", 2])]
    save(folder, "scan", [scan], inputs, [info("s", F32, [2]), info("ys", F32, ["t", 2])])


if __name__ == "__main__":
    main()
