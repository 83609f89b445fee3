"""
ONNX LSTM, GRU and RNN against onnxruntime on the CPU and `cuda`: every direction,
both layouts, biases, initial states, sequence lengths, peepholes, clip,
linear_before_reset, input_forget, the activations with their parameters, omitted
outputs, weights given at run time, dynamic batch and sequence length. Each case
compiles one model once and runs it on fresh random inputs (several shapes where its
dims are dynamic). f64, which onnxruntime does not run, is checked against onnx's
reference implementation.
"""

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
ELEMENTS = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}


@dataclass
class Case:
    """One recurrent node and the inputs it gets (see `model`)."""

    op: str
    direction: str = "forward"
    layout: int = 0
    hidden: int = 5
    features: int = 3
    seq: int = 4  # the static sizes (`dynamic` runs several)
    batch: int = 3
    bias: bool = True
    initial: bool = False  # initial_h (and initial_c for LSTM)
    lengths: bool = False  # sequence_lens, a graph input
    peepholes: bool = False
    weights_at_run_time: bool = False  # W, R, B as graph inputs, not initializers
    dynamic: bool = False  # seq and batch symbolic, run on several shapes
    outputs: tuple[bool, ...] = (True, True, True)  # Y, Y_h, Y_c: False leaves it out
    attrs: dict[str, Any] = field(default_factory=dict)
    dtype: type = np.float32

    @property
    def directions(self) -> int:
        return 2 if self.direction == "bidirectional" else 1


def random_weights(case: Case) -> dict[str, np.ndarray]:
    rng = np.random.default_rng()
    nd, h, gates = case.directions, case.hidden, GATES[case.op]
    weights = {
        "W": rng.uniform(-0.6, 0.6, (nd, gates * h, case.features)),
        "R": rng.uniform(-0.6, 0.6, (nd, gates * h, h)),
        "B": rng.uniform(-0.5, 0.5, (nd, 2 * gates * h)),
        "P": rng.uniform(-0.5, 0.5, (nd, 3 * h)),
    }
    return {k: v.astype(case.dtype) for k, v in weights.items()}


def model(case: Case, weights: dict[str, np.ndarray]) -> tuple[Any, dict[str, np.ndarray]]:
    """The one-node model of `case`, and its weights given as run-time inputs."""
    nd, h = case.directions, case.hidden
    element = ELEMENTS[case.dtype]
    seq, batch = ("s", "b") if case.dynamic else (case.seq, case.batch)
    state = [nd, batch, h] if case.layout == 0 else [batch, nd, h]
    inputs = {"X": [seq, batch, case.features] if case.layout == 0 else [batch, seq, case.features]}
    names = ["X", "W", "R", "B" if case.bias else ""]
    names.append("lengths" if case.lengths else "")
    names += ["initial_h", "initial_c"] if case.initial else ["", ""]
    names.append("P" if case.peepholes else "")
    arity = 8 if case.op == "LSTM" else 6
    names = names[:arity]
    for name in names[5:]:
        if name and name != "P":
            inputs[name] = state
    if case.lengths:
        inputs["lengths"] = [batch]
    given = {n: weights[n] for n in names if n in weights}
    initializers = []
    if case.weights_at_run_time:
        inputs.update({n: list(w.shape) for n, w in given.items()})
    else:
        initializers = [numpy_helper.from_array(w, n) for n, w in given.items()]
    while names and not names[-1]:
        names.pop()
    out_names = ["Y", "Y_h", "Y_c"][: 3 if case.op == "LSTM" else 2]
    out_names = [n if wanted else "" for n, wanted in zip(out_names, case.outputs, strict=False)]
    ranks = {"Y": 4, "Y_h": 3, "Y_c": 3}
    node = helper.make_node(
        case.op,
        names,
        out_names,
        hidden_size=h,
        direction=case.direction,
        **({"layout": case.layout} if case.layout else {}),
        **case.attrs,
    )
    infos = [
        helper.make_tensor_value_info(
            n, TensorProto.INT32 if n == "lengths" else element, [d for d in dims]
        )
        for n, dims in inputs.items()
    ]
    results = [
        helper.make_tensor_value_info(n, element, [f"{n}{i}" for i in range(ranks[n])])
        for n in out_names
        if n
    ]
    graph = helper.make_graph([node], "g", infos, results, initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
    return proto, given if case.weights_at_run_time else {}


def feeds(case: Case, proto: Any, given: dict, seq: int, batch: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng()
    shapes = {"s": seq, "b": batch}
    result = {}
    for info in proto.graph.input:
        if info.name in given:
            result[info.name] = given[info.name]
            continue
        dims = [
            d.dim_value if d.HasField("dim_value") else shapes[d.dim_param]
            for d in info.type.tensor_type.shape.dim
        ]
        if info.name == "lengths":  # the first sequence full, then an empty one, then any
            lengths = rng.integers(0, seq + 1, dims)
            lengths[: min(2, len(lengths))] = [seq, 0][: len(lengths)]
            result["lengths"] = lengths.astype(np.int32)
        else:
            result[info.name] = rng.standard_normal(dims).astype(case.dtype)
    return result


def reference_run(case: Case, weights: dict[str, np.ndarray], reference: str) -> Any:
    """
    A function from the inputs to the reference's outputs. onnxruntime runs layout 0
    only: a layout 1 case runs as layout 0 on transposed inputs, its outputs transposed.
    """
    proto, _ = model(replace(case, layout=0), weights)
    if reference == "onnxruntime":
        session = ort.InferenceSession(
            proto.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        run = session.run
    else:
        run = ReferenceEvaluator(proto).run

    def outputs(inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        if case.layout == 0:
            return run(None, inputs)
        swapped = {k: v.swapaxes(0, 1) if k in LAYOUT_SWAPPED else v for k, v in inputs.items()}
        return [
            np.moveaxis(y, 2, 0) if y.ndim == 4 else y.swapaxes(0, 1) for y in run(None, swapped)
        ]

    return outputs


LAYOUT_SWAPPED = {"X", "initial_h", "initial_c"}


def check(case: Case, target: str, shapes=None, reference: str = "onnxruntime"):
    weights = random_weights(case)
    proto, given = model(case, weights)
    exe = compile_for(proto, target)
    run = reference_run(case, weights, reference)
    tolerance = 1e-5 if case.dtype == np.float32 else 1e-12
    for seq, batch in shapes or [(case.seq, case.batch)]:
        inputs = feeds(case, proto, given, seq, batch)
        want = run(inputs)
        got = exe(*inputs.values())
        got = list(got) if isinstance(got, tuple) else [got]
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance)


CASES = {
    "rnn-forward-initial-batch1": Case("RNN", initial=True, batch=1),
    "rnn-reverse-relu-clip": Case(
        "RNN", "reverse", attrs={"activations": ["Relu"], "clip": 0.7}, lengths=True
    ),
    "rnn-bidirectional-layout1": Case(
        "RNN",
        "bidirectional",
        layout=1,
        initial=True,
        attrs={
            "activations": ["LeakyRelu", "ScaledTanh"],
            "activation_alpha": [0.3, 0.8],
            "activation_beta": [0.7],  # consumed by the functions that take one
        },
    ),
    "gru-forward-linear-before-reset": Case(
        "GRU", initial=True, attrs={"linear_before_reset": 1}, outputs=(False, True)
    ),
    "gru-bidirectional-batch1-weights-at-run-time": Case(
        "GRU", "bidirectional", batch=1, initial=True, weights_at_run_time=True
    ),
    "gru-reverse-lengths-layout1-clip": Case(
        "GRU", "reverse", layout=1, lengths=True, attrs={"clip": 0.5}, bias=False
    ),
    "gru-bidirectional-activations": Case(
        "GRU",
        "bidirectional",
        lengths=True,
        initial=True,
        attrs={
            "activations": ["HardSigmoid", "Softsign", "Sigmoid", "Elu"],
            "activation_alpha": [0.3, 0.9],
            "activation_beta": [0.4],
            "linear_before_reset": 1,
        },
    ),
    "lstm-forward-peepholes-only-y_c": Case(
        "LSTM", initial=True, peepholes=True, outputs=(False, False, True), batch=1
    ),
    "lstm-reverse-input-forget-lengths": Case(
        "LSTM", "reverse", lengths=True, initial=True, attrs={"input_forget": 1, "clip": 0.9}
    ),
    "lstm-bidirectional-layout1-activations": Case(
        "LSTM",
        "bidirectional",
        layout=1,
        peepholes=True,
        lengths=True,
        attrs={
            "activations": [
                "Sigmoid",
                "Softplus",
                "Tanh",
                "HardSigmoid",
                "Affine",
                "ThresholdedRelu",
            ],
            "activation_alpha": [0.25, 0.5, 0.1],
            "activation_beta": [0.45, 0.2],
        },
    ),
    "lstm-weights-at-run-time": Case(
        "LSTM", "bidirectional", initial=True, peepholes=True, weights_at_run_time=True
    ),
    # 4 x 13 gate columns: the step's h @ R^T takes the matmul kernel, R's panels packed
    # once before the time loop (`hoisted_panels`), the last panel ragged
    "lstm-wide-weights-at-run-time": Case(
        "LSTM", hidden=13, features=7, seq=6, weights_at_run_time=True, initial=True
    ),
    # gates of whole panels: each of the step's matmul tasks runs the gates of its units
    # (`slice_consumers`); 8 x 256 x 1024 splits the panels between two threads
    "lstm-gates-in-the-matmul-tasks": Case(
        "LSTM", hidden=256, features=16, seq=3, batch=8, initial=True
    ),
    "lstm-gates-in-the-matmul-tasks-peepholes-lengths": Case(
        "LSTM",
        "reverse",
        hidden=128,
        features=8,
        seq=3,
        batch=8,
        peepholes=True,
        lengths=True,
        initial=True,
        attrs={"input_forget": 1, "clip": 0.9},
    ),
    "lstm-gates-in-the-matmul-tasks-bidirectional-layout1-weights-at-run-time": Case(
        "LSTM",
        "bidirectional",
        layout=1,
        hidden=64,
        features=8,
        seq=3,
        batch=4,
        weights_at_run_time=True,
    ),
    # R given at run time: its panels packed before the loop, or R read in place
    "lstm-gates-in-the-matmul-tasks-hidden-256-weights-at-run-time": Case(
        "LSTM", hidden=256, features=16, seq=3, batch=8, weights_at_run_time=True, initial=True
    ),
    # the GRU's gates update h, which the matmul reads, in place: they stay on their own
    "gru-hidden-256-linear-before-reset": Case(
        "GRU", hidden=256, features=16, seq=3, batch=8, attrs={"linear_before_reset": 1}
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_onnxruntime(name, target):
    check(CASES[name], target)


@pytest.mark.parametrize(
    "op, direction", [("LSTM", "bidirectional"), ("GRU", "reverse"), ("RNN", "forward")]
)
def test_dynamic_batch_and_sequence(op, direction, target):
    case = Case(op, direction, dynamic=True, initial=True, lengths=op != "RNN")
    check(case, target, shapes=((5, 2), (1, 1), (3, 4)))


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_f64_matches_the_reference(op, target):
    """onnxruntime runs these ops in f32 only: onnx's reference implementation, in f64."""
    check(Case(op, initial=True, dtype=np.float64), target, reference="onnx")
