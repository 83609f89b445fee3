"""
ONNX control flow (`mlc/frontends/onnx/ops/control_flow.py`, `scan.py`) against
onnxruntime on fresh random inputs: Loop as a for loop (a cumulative sum), as a while
loop on a data-dependent condition (no trip count, and torch's form with one), a
do-while with scan outputs; an RNN written as Scan (both directions, other axes); If
choosing between subgraphs that capture outer values, with outputs of different shapes;
a Loop nested in an If and an If nested in a Loop; static and dynamic dims, several
dtypes; on the CPU and `cuda`.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.gpu.targets import TARGETS, compile_for

CUDA = pytest.mark.gpu


def on_targets(cases, on_cuda, ids=None):
    """Params `(*case, target)`: every case on the CPU, those at `on_cuda` (indices) on
    `cuda` too (one program of each kind there: its PTX is checked without a GPU)."""
    names = ids or [str(c) for c in cases]
    cpu = [pytest.param(*c, "cpu", id=f"{n}-cpu") for c, n in zip(cases, names, strict=True)]
    gpu = [pytest.param(*cases[i], "cuda", marks=CUDA, id=f"{names[i]}-cuda") for i in on_cuda]
    return cpu + gpu


ort = pytest.importorskip("onnxruntime")

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
INT64_MAX = np.iinfo(np.int64).max


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def loop_inputs():
    """A Loop body's first inputs: the step number and the condition."""
    return [info("i", I64, []), info("c", BOOL, [])]


def graph(nodes, name, inputs, outputs, initializers=()):
    return helper.make_graph(nodes, name, inputs, outputs, list(initializers))


def model(nodes, inputs, outputs, initializers=(), opset=17):
    """A model of `nodes`; `outputs` are names, their types inferred, or value infos
    (where onnx's inference gives no shape)."""
    outs = [onnx.ValueInfoProto(name=n) if isinstance(n, str) else n for n in outputs]
    proto = helper.make_model(
        graph(nodes, "control_flow", inputs, outs, initializers),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    proto.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=True)
    found = {v.name: v.type for v in inferred.graph.value_info}
    for out in proto.graph.output:
        if not out.type.HasField("tensor_type"):
            out.type.CopyFrom(found[out.name])
    onnx.checker.check_model(proto, full_check=True)
    return proto


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def check(proto, target, *arrays, rtol=1e-5, atol=1e-6, exe=None):
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    arrays = [np.asarray(a) for a in arrays]
    want = session.run(None, dict(zip(names, arrays, strict=True)))
    got = (exe or compile_for(proto, target))(*arrays)
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


# ---------------------------------------------------------------------------
# Loop
# ---------------------------------------------------------------------------


def cumsum_loop(elem, rows, cond=None):
    """Sum of x's rows, a Loop over Shape(x)[0] carrying the sum, the partial sums
    stacked; `cond`: no cond input (None), or a constant true the body passes on."""
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    body = graph(
        [
            helper.make_node("Gather", ["x", "i"], ["row"], axis=0),  # x: captured
            helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["partial"]),
            helper.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [info("i", I64, []), info("c", BOOL, []), info("sum_in", elem, [5])],
        [info("c_out", BOOL, []), info("sum_out", elem, [5]), info("partial", elem, [5])],
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Loop", ["n", cond or "", "init"], ["sum", "partials"], body=body),
    ]
    inits = [const("zero", np.int64(0)), const("init", np.zeros(5, dtype))]
    if cond:
        inits.append(const(cond, np.bool_(True)))
    return model(nodes, [info("x", elem, [rows, 5])], [info("sum", elem, [5]), "partials"], inits)


CUMSUM = [(e, r) for e in (F32, TensorProto.DOUBLE, I64) for r in (7, "n")]


@pytest.mark.parametrize(
    ("elem", "rows", "target"),
    on_targets(CUMSUM, [1, 4], [f"{t}-{r}" for t in ("f32", "f64", "i64") for r in (7, "n")]),
)
def test_cumulative_sum_loop(elem, rows, target):
    rng = np.random.default_rng()
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    x = (rng.standard_normal((7, 5)) * 10).astype(dtype)
    _, partials = check(cumsum_loop(elem, rows), target, x)
    np.testing.assert_allclose(partials, np.cumsum(x, axis=0), rtol=1e-5)
    if rows == "n":
        empty = np.zeros((0, 5), dtype)
        check(cumsum_loop(elem, rows), target, empty)
        check(cumsum_loop(elem, rows), target, x[:1])


def test_constant_true_condition_is_a_for_loop():
    import mlc

    module = str(mlc.import_onnx(cumsum_loop(F32, "n", cond="go")))
    assert "scf.for" in module and "scf.while" not in module
    check(cumsum_loop(F32, "n", cond="go"), "cpu", np.ones((4, 5), np.float32))


def doubling_loop(trip=None):
    """`while sum|x| < limit: x *= 2; k += 1`, each step's sum|x| stacked (torch's form
    with `trip`: M = INT64_MAX)."""
    cond_nodes = lambda x, out: [  # noqa: E731
        helper.make_node("Abs", [x], [f"{out}_abs"]),
        helper.make_node("ReduceSum", [f"{out}_abs"], [f"{out}_sum"], keepdims=0),
        helper.make_node("Less", [f"{out}_sum", "limit"], [out]),  # limit: captured
    ]
    carried_out = [info("x_out", F32, ["b", 4]), info("k_out", I64, [])]
    body = graph(
        [
            helper.make_node("Mul", ["x_in", "two"], ["x_out"]),
            helper.make_node("Add", ["k_in", "one"], ["k_out"]),
            *cond_nodes("x_out", "c_out"),
            helper.make_node("Unsqueeze", ["c_out_sum", "axis0"], ["sum"]),
        ],
        "body",
        [*loop_inputs(), info("x_in", F32, ["b", 4]), info("k_in", I64, [])],
        [info("c_out", BOOL, []), *carried_out, info("sum", F32, [1])],  # sum: a scan output
        [const("two", np.float32(2)), const("axis0", np.int64([0]))],  # the body's own
    )
    nodes = [
        *cond_nodes("x", "c0"),
        helper.make_node("Loop", [trip or "", "c0", "x", "k0"], ["y", "k", "sums"], body=body),
    ]
    inits = [const("one", np.int64(1)), const("k0", np.int64(0))]
    if trip:
        inits.append(const(trip, np.int64(INT64_MAX)))
    inputs = [info("x", F32, ["b", 4]), info("limit", F32, [])]
    outputs = [info("y", F32, ["b", 4]), info("k", I64, []), info("sums", F32, [None, 1])]
    return model(nodes, inputs, outputs, inits)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("trip", [None, "max_trip"], ids=["while", "torch"])
def test_while_loop_with_a_data_dependent_condition(target, trip):
    rng = np.random.default_rng()
    x = rng.standard_normal((3, 4)).astype(np.float32)
    limit = np.float32(np.abs(x).sum() * rng.uniform(10, 1000))
    _, k, sums = check(doubling_loop(trip), target, x, limit)
    assert k > 2 and sums.shape == (k, 1)
    check(doubling_loop(trip), target, x[:1], np.float32(0))  # no step


def do_while(elem=F32):
    """At most M steps while max(x) < 5 (first step always), x scaled each step, the sum
    of each step stacked: M and cond both given, M known at run time."""
    outs = [("x_out", ["n"]), ("s", [1]), ("step", [])]
    body = graph(
        [
            helper.make_node("Mul", ["x_in", "scale"], ["x_out"]),  # scale: captured input
            helper.make_node("ReduceMax", ["x_out"], ["top"], keepdims=0),
            helper.make_node("Less", ["top", "five"], ["c_out"]),
            helper.make_node("ReduceSum", ["x_out"], ["s"], keepdims=1),
            helper.make_node("Cast", ["i"], ["step"], to=elem),
        ],
        "body",
        [info("i", I64, []), info("c", BOOL, []), info("x_in", elem, ["n"])],
        [info("c_out", BOOL, []), *(info(n, elem, s) for n, s in outs)],
        [const("five", np.asarray(5, helper.tensor_dtype_to_np_dtype(elem)))],
    )
    nodes = [helper.make_node("Loop", ["m", "yes", "x"], ["y", "sums", "steps"], body=body)]
    inputs = [info("m", I64, []), info("x", elem, ["n"]), info("scale", elem, [])]
    outputs = [info("y", elem, ["n"]), "sums", "steps"]
    return model(nodes, inputs, outputs, [const("yes", np.bool_(True))])


@pytest.mark.parametrize("target", TARGETS)
def test_do_while_with_trip_count_and_scan_outputs(target):
    rng = np.random.default_rng()
    x = rng.uniform(0.1, 1, 6).astype(np.float32)
    exe = compile_for(do_while(), target)
    for m in (0, 3, 50):
        got = check(do_while(), target, np.int64(m), x, np.float32(1.3), exe=exe)
        assert got[1].shape[0] <= m


# ---------------------------------------------------------------------------
# Scan
# ---------------------------------------------------------------------------


def rnn_scan(batch, steps, reverse=False, batch_first=False):
    """h = tanh(x_t W + h U + b) over the steps, W U b captured from the outer graph."""
    body = graph(
        [
            helper.make_node("MatMul", ["xt", "W"], ["xw"]),
            helper.make_node("MatMul", ["h_in", "U"], ["hu"]),
            helper.make_node("Add", ["xw", "hu"], ["pre"]),
            helper.make_node("Add", ["pre", "b"], ["pre_b"]),
            helper.make_node("Tanh", ["pre_b"], ["h_out"]),
            helper.make_node("Identity", ["h_out"], ["y"]),
        ],
        "rnn",
        [info("h_in", F32, [batch, 4]), info("xt", F32, [batch, 3])],
        [info("h_out", F32, [batch, 4]), info("y", F32, [batch, 4])],
    )
    axis = 1 if batch_first else 0
    attrs = dict(num_scan_inputs=1, scan_input_axes=[axis], scan_output_axes=[axis])
    if reverse:
        attrs |= dict(scan_input_directions=[1], scan_output_directions=[1])
    nodes = [helper.make_node("Scan", ["h0", "x"], ["h", "ys"], body=body, **attrs)]
    shape = [batch, steps, 3] if batch_first else [steps, batch, 3]
    rng = np.random.default_rng()
    weights = [
        const(n, rng.standard_normal(s).astype(np.float32))
        for n, s in [("W", (3, 4)), ("U", (4, 4)), ("b", (4,))]
    ]
    inputs = [info("h0", F32, [batch, 4]), info("x", F32, shape)]
    return model(nodes, inputs, ["h", "ys"], weights)


RNN = [(2, 5, False, False), ("b", "t", True, True), (3, 4, True, False)]


@pytest.mark.parametrize(
    ("batch", "steps", "reverse", "batch_first", "target"),
    on_targets(RNN, [1], ["static", "dynamic-reverse-batch-first", "reverse-static"]),
)
def test_rnn_as_scan(batch, steps, reverse, batch_first, target):
    rng = np.random.default_rng()
    proto = rnn_scan(batch, steps, reverse, batch_first)
    x = rng.standard_normal((3, 5, 3) if batch_first else (5, 3, 3)).astype(np.float32)
    h0 = rng.standard_normal((3, 4)).astype(np.float32)
    if batch == 2:
        x, h0 = x[:, :2], h0[:2]
    if steps == 4:
        x = x[:4]
    check(proto, target, h0, x)


def scan8(batch):
    """Scan-8: a running sum and a running max over axis 1, backwards, per batch entry."""
    body = graph(
        [
            helper.make_node("Add", ["sum_in", "xt"], ["sum_out"]),
            helper.make_node("Max", ["max_in", "xt"], ["max_out"]),
            helper.make_node("Identity", ["sum_out"], ["y"]),
        ],
        "step",
        [info(n, F32, [4]) for n in ("sum_in", "max_in", "xt")],
        [info(n, F32, [4]) for n in ("sum_out", "max_out", "y")],
    )
    node = helper.make_node(
        "Scan",
        ["", "s0", "m0", "x"],
        ["s", "m", "ys"],
        body=body,
        num_scan_inputs=1,
        directions=[1],
    )
    inputs = [info("s0", F32, [batch, 4]), info("m0", F32, [batch, 4])]
    inputs.append(info("x", F32, [batch, "t", 4]))
    return model([node], inputs, ["s", "m", "ys"], opset=8)


@pytest.mark.parametrize("batch", [3, "b"])
def test_scan8_over_a_batch(batch):
    rng = np.random.default_rng()
    s0, m0 = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    check(scan8(batch), "cpu", s0, m0, x)


# ---------------------------------------------------------------------------
# If
# ---------------------------------------------------------------------------


def choose(rows):
    """x * w if sum(x) > 0, else x[:1] - w with the else branch's own `w`: outputs of
    shapes [n, 4] and [1, 4] unify to [?, 4]; a second output from both."""
    then = graph(
        [
            helper.make_node("Mul", ["x", "w"], ["a"]),
            helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
        ],
        "then",
        [],
        [info("a", F32, [None, 4]), info("m", F32, [])],
    )
    other = graph(
        [
            helper.make_node("Slice", ["x", "zero", "one"], ["head"]),
            helper.make_node("Sub", ["head", "w"], ["a2"]),  # the branch's w shadows
            helper.make_node("Identity", ["zero_f"], ["m2"]),
        ],
        "else",
        [],
        [info("a2", F32, [None, 4]), info("m2", F32, [])],
        [const("w", np.float32([10, 20, 30, 40])), const("zero_f", np.float32(0))],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero_s"], ["c"]),
        helper.make_node("If", ["c"], ["y", "m"], then_branch=then, else_branch=other),
    ]
    inits = [
        const("w", np.float32([1, -2, 3, -4])),
        const("zero", np.int64([0])),
        const("one", np.int64([1])),
        const("zero_s", np.float32(0)),
    ]
    return model(nodes, [info("x", F32, [rows, 4])], ["y", "m"], inits)


@pytest.mark.parametrize(("rows", "target"), on_targets([(5,), ("n",)], [1], ["5", "n"]))
def test_if_with_captures_and_shapes_that_differ(rows, target):
    rng = np.random.default_rng()
    x = np.abs(rng.standard_normal((5, 4))).astype(np.float32)
    for sign in (1, -1):  # each branch
        y, _ = check(choose(rows), target, sign * x)
        assert y.shape == ((5, 4) if sign > 0 else (1, 4))


@pytest.mark.parametrize("target", [pytest.param("cpu"), pytest.param("cuda", marks=CUDA)])
def test_if_branches_of_one_element_and_different_ranks(target):
    """A scalar in one branch, a `[1]` tensor in the other (AffineGrid's function body):
    the If gives `[1]`, which the rest broadcasts as ONNX would the scalar."""
    then = graph(
        [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0)],
        "then",
        [],
        [info("m", F32, [])],
    )
    other = graph(
        [helper.make_node("ReduceMin", ["x"], ["m2"], keepdims=1)],
        "else",
        [],
        [info("m2", F32, [1])],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero_f"], ["c"]),
        helper.make_node("If", ["c"], ["m"], then_branch=then, else_branch=other),
        helper.make_node("Sub", ["x", "m"], ["y"]),
    ]
    inits = [const("zero_f", np.float32(0))]
    proto = model(nodes, [info("x", F32, [None])], [info("y", F32, [None])], inits)
    exe = compile_for(proto, target)
    rng = np.random.default_rng()
    for size, sign in ((5, 1), (3, -1), (1, 1)):  # each branch
        check(proto, target, sign * np.abs(rng.standard_normal(size)).astype(np.float32), exe=exe)


def test_known_condition_inlines_the_branch():
    import mlc

    proto = choose(5)
    proto.graph.initializer.append(const("c", np.bool_(False)))
    del proto.graph.node[:2]
    module = str(mlc.import_onnx(proto))
    assert "scf.if" not in module
    x = np.random.default_rng().standard_normal((5, 4)).astype(np.float32)
    check(proto, "cpu", x)


def loop_in_if(rows):
    """If sum(x) > 0, the cumulative sum of x's rows (a Loop), else x itself."""
    inner = cumsum_loop(F32, rows).graph
    outs = [info("partials", F32, [rows, 5])]
    then = graph(list(inner.node), "then", [], outs, inner.initializer)
    negated = [helper.make_node("Neg", ["x"], ["x2"])]
    other = graph(negated, "else", [], [info("x2", F32, [rows, 5])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero_s"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
    ]
    inits = [const("zero_s", np.float32(0))]
    return model(nodes, [info("x", F32, [rows, 5])], ["y"], inits)


def if_in_loop(rows):
    """Over x's rows: add the row at even steps, subtract it at odd ones (an If on the
    step number inside the body, reading x from two levels out)."""
    add, sub = (helper.make_node(op, ["acc", "row"], [op]) for op in ("Add", "Sub"))
    even = graph([add], "even", [], [info("Add", F32, [5])])
    odd = graph([sub], "odd", [], [info("Sub", F32, [5])])
    body = graph(
        [
            helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
            helper.make_node("Mod", ["i", "two"], ["parity"]),
            helper.make_node("Equal", ["parity", "zero"], ["is_even"]),
            helper.make_node("If", ["is_even"], ["next"], then_branch=even, else_branch=odd),
            helper.make_node("Identity", ["c"], ["c_out"]),
        ],
        "body",
        [info("i", I64, []), info("c", BOOL, []), info("acc", F32, [5])],
        [info("c_out", BOOL, []), info("next", F32, [5])],
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Loop", ["n", "", "init"], ["y"], body=body),
    ]
    inits = [
        const("zero", np.int64(0)),
        const("two", np.int64(2)),
        const("init", np.zeros(5, np.float32)),
    ]
    return model(nodes, [info("x", F32, [rows, 5])], [info("y", F32, [5])], inits)


@pytest.mark.parametrize(("rows", "target"), on_targets([(6,), ("n",)], [1], ["6", "n"]))
def test_nested_subgraphs(rows, target):
    rng = np.random.default_rng()
    x = np.abs(rng.standard_normal((6, 5))).astype(np.float32)
    check(loop_in_if(rows), target, x)
    check(loop_in_if(rows), target, -x)
    signs = np.where(np.arange(6) % 2 == 0, 1, -1)[:, None]
    (y,) = check(if_in_loop(rows), target, x)
    np.testing.assert_allclose(y, (signs * x).sum(axis=0), rtol=1e-5, atol=1e-6)
