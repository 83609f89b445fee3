"""
The CPU benchmark workloads, each written once per system that can run it.

A `Workload` holds its inputs, a numpy reference (the "vs numpy" baseline, writing into
preallocated buffers where numpy allows it), and per system what to compile: mlc's
`ml`-dialect text (or an ONNX model), an ONNX model for onnxruntime, MLIR for IREE
(upstream `linalg`, or IREE's import of the ONNX model). `work` is the FLOPs or bytes
one call must do at least, so rates can be put against the measured machine limits.
"""

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).parent
ROOT = HERE.parent
Factory = Callable[..., Callable[[], Any]]  # inputs -> a zero-argument call


@dataclass
class Workload:
    name: str
    inputs: list[np.ndarray]
    numpy: Factory
    mlc: Callable[[], Any] | None = None  # the source `mlc.compile` takes
    onnx: Callable[[], Any] | None = None  # an onnx.ModelProto for onnxruntime
    iree: Callable[[], tuple[str, str]] | None = None  # (MLIR text, IREE input type)
    work: float = 0.0  # FLOPs or bytes per call
    unit: str = ""  # "GFLOP/s", "GB/s" or "" (time only)
    limit: str = ""  # "fma" or "copy": what the rate is a fraction of
    tolerance: float = 1e-4
    missing: dict[str, str] = field(default_factory=dict[str, str])  # system -> why
    extra: dict[str, Factory] = field(default_factory=dict[str, Factory])  # more numpy variants


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _randn(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


# --- ONNX models built here for the kernels -------------------------------------------


def _onnx_model(nodes: list[Any], inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Any:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes,
        "kernel",
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape))
            for name, a in zip("abcd", inputs, strict=False)
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, list(out_shape))],
    )
    # IR version 8, not onnx's newest: the onnxruntime beside it may lag behind onnx
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


# --- matmul ------------------------------------------------------------------------


def matmul(n: int) -> Workload:
    rng = _rng()
    inputs = [_randn(rng, n, n), _randn(rng, n, n)]
    t = f"tensor<{n}x{n}xf32>"

    def numpy(a: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        out = np.empty((n, n), np.float32)
        return lambda: np.matmul(a, b, out=out)

    def onnx() -> Any:
        from onnx import helper

        return _onnx_model([helper.make_node("MatMul", ["a", "b"], ["out"])], inputs, (n, n))

    mlc = f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %c = ml.matmul %a, %b : ({t}, {t}) -> {t}
  func.return %c : {t}
}}"""
    iree = f"""func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : {t}
  %init = linalg.fill ins(%zero : f32) outs(%empty : {t}) -> {t}
  %c = linalg.matmul ins(%a, %b : {t}, {t}) outs(%init : {t}) -> {t}
  return %c : {t}
}}"""
    return Workload(
        f"matmul {n} f32",
        inputs,
        numpy,
        lambda: mlc,
        onnx,
        lambda: (iree, "none"),
        work=2.0 * n**3,
        unit="GFLOP/s",
        limit="fma",
        tolerance=1e-3 * max(1, n // 256),
    )


# --- the elementwise chain relu(a*b+c)*0.5+d -----------------------------------------


def chain(n: int) -> Workload:
    rng = _rng()
    inputs = [_randn(rng, n) for _ in range(4)]
    t = f"tensor<{n}xf32>"

    def numpy(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> Callable[[], Any]:
        out = np.empty_like(a)

        def run() -> np.ndarray:
            np.multiply(a, b, out=out)
            np.add(out, c, out=out)
            np.maximum(out, 0, out=out)
            np.multiply(out, np.float32(0.5), out=out)
            return np.add(out, d, out=out)

        return run

    def onnx() -> Any:
        from onnx import helper, numpy_helper

        half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
        nodes = [
            helper.make_node("Constant", [], ["h"], value=half),
            helper.make_node("Mul", ["a", "b"], ["ab"]),
            helper.make_node("Add", ["ab", "c"], ["abc"]),
            helper.make_node("Relu", ["abc"], ["r"]),
            helper.make_node("Mul", ["r", "h"], ["rh"]),
            helper.make_node("Add", ["rh", "d"], ["out"]),
        ]
        return _onnx_model(nodes, inputs, (n,))

    s = "tensor<f32>"
    mlc = f"""func.func @main(%a: {t}, %b: {t}, %c: {t}, %d: {t}) -> {t} {{
  %half = arith.constant dense<0.5> : {s}
  %ab = ml.mul %a, %b : ({t}, {t}) -> {t}
  %abc = ml.add %ab, %c : ({t}, {t}) -> {t}
  %r = ml.relu %abc : ({t}) -> {t}
  %rh = ml.mul %r, %half : ({t}, {s}) -> {t}
  %out = ml.add %rh, %d : ({t}, {t}) -> {t}
  func.return %out : {t}
}}"""
    iree = f"""#map = affine_map<(i) -> (i)>
func.func @main(%a: {t}, %b: {t}, %c: {t}, %d: {t}) -> {t} {{
  %empty = tensor.empty() : {t}
  %out = linalg.generic {{indexing_maps = [#map, #map, #map, #map, #map],
      iterator_types = ["parallel"]}}
      ins(%a, %b, %c, %d : {t}, {t}, {t}, {t}) outs(%empty : {t}) {{
  ^bb0(%x: f32, %y: f32, %z: f32, %w: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %z : f32
    %r = arith.maximumf %s, %zero : f32
    %h = arith.mulf %r, %half : f32
    %e = arith.addf %h, %w : f32
    linalg.yield %e : f32
  }} -> {t}
  return %out : {t}
}}"""
    return Workload(
        f"relu(a*b+c)*0.5+d, {n // 2**20}M f32" if n >= 2**20 else f"chain {n} f32",
        inputs,
        numpy,
        lambda: mlc,
        onnx,
        lambda: (iree, "none"),
        work=5.0 * 4 * n,
        unit="GB/s",
        limit="copy",
        tolerance=1e-5,
    )


# --- softmax -------------------------------------------------------------------------


def softmax(rows: int, cols: int) -> Workload:
    rng = _rng()
    inputs = [_randn(rng, rows, cols)]
    t = f"tensor<{rows}x{cols}xf32>"

    def numpy(x: np.ndarray) -> Callable[[], Any]:
        out = np.empty_like(x)
        row = np.empty((rows, 1), np.float32)

        def run() -> np.ndarray:
            np.max(x, axis=1, keepdims=True, out=row)
            np.subtract(x, row, out=out)
            np.exp(out, out=out)
            np.sum(out, axis=1, keepdims=True, out=row)
            return np.divide(out, row, out=out)

        return run

    def onnx() -> Any:
        from onnx import helper

        node = helper.make_node("Softmax", ["a"], ["out"], axis=-1)
        return _onnx_model([node], inputs, (rows, cols))

    mlc = f"""func.func @main(%x: {t}) -> {t} {{
  %y = ml.softmax %x {{axis = -1 : i64}} : ({t}) -> {t}
  func.return %y : {t}
}}"""
    iree = f"""func.func @main(%x: {t}) -> {t} {{
  %empty = tensor.empty() : {t}
  %y = linalg.softmax dimension(1) ins(%x : {t}) outs(%empty : {t}) -> {t}
  return %y : {t}
}}"""
    return Workload(
        f"softmax {rows}x{cols} f32",
        inputs,
        numpy,
        lambda: mlc,
        onnx,
        lambda: (iree, "none"),
        work=2.0 * 4 * rows * cols,
        unit="GB/s",
        limit="copy",
        tolerance=1e-5,
    )


# --- the example programs (examples/*.mlir, mlc vs numpy) ------------------------------


def _load_examples() -> Any:
    spec = importlib.util.spec_from_file_location("mlc_examples_run", ROOT / "examples" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example(name: str) -> Workload:
    """`examples/<name>` at its own sizes, against the numpy version in examples/run.py."""
    examples = _load_examples()
    reference, make_inputs = examples.EXAMPLES[name]
    inputs = make_inputs()
    why = "no ONNX or linalg version of this .mlir example (the ONNX model rows cover it)"
    return Workload(
        f"examples/{name}",
        inputs,
        lambda *args: lambda: reference(*args),
        lambda: ROOT / "examples" / name,
        missing={"onnxruntime": why, "IREE": why},
    )


# --- PageRank (also bench/pagerank.py) ---------------------------------------------------


def pagerank(n: int, iterations: int) -> Workload:
    """`examples/pagerank.mlir` (written for N = 1000, 20 iterations) at `n`, `iterations`."""
    text = (ROOT / "examples" / "pagerank.mlir").read_text().replace("1000", str(n))
    text = text.replace(
        "%hi = arith.constant 20 : index", f"%hi = arith.constant {iterations} : index"
    )
    rng = _rng()
    g = rng.random((n, n), dtype=np.float32)
    g /= g.sum(axis=0, keepdims=True)
    inputs = [
        g,
        np.full((n, 1), 1 / n, np.float32),
        np.ones((n, 1), np.float32),
        np.full((1, n), 1 / n, np.float32),
    ]

    def power_iteration(step: Callable[..., np.ndarray]) -> Factory:
        def factory(g: np.ndarray, p: np.ndarray, e: np.ndarray, u: np.ndarray) -> Any:
            def run() -> np.ndarray:
                q = p
                for _ in range(iterations):
                    q = step(g, q, e, u)
                return q

            return run

        return factory

    alpha, beta = np.float32(0.85), np.float32(0.15)
    optimal = power_iteration(lambda g, p, e, u: alpha * (g @ p) + beta * (e @ (u @ p)))
    naive = power_iteration(lambda g, p, e, u: alpha * (g @ p) + beta * ((e @ u) @ p))
    why = "a loop program: no ONNX or linalg version of it here"
    return Workload(
        f"PageRank N={n}, {iterations} iterations",
        inputs,
        optimal,
        lambda: text,
        missing={"onnxruntime": why, "IREE": why},
        extra={"numpy naive (as written)": naive},
    )


# --- ONNX models (examples/onnx_models.py) ------------------------------------------------


def onnx_model(name: str, make: Callable[[Any], Any]) -> Workload:
    """
    A model from `examples/onnx_models.py` in every system. Until that module and
    `mlc.import_onnx` exist, the row says so instead of timing anything.
    """
    try:
        sys.path.insert(0, str(ROOT / "examples"))
        import onnx_models  # pyright: ignore[reportMissingImports]

        model = make(onnx_models)
    except (ImportError, AttributeError) as error:
        why = f"examples/onnx_models.py is not available ({error})"
        return Workload(name, [], lambda: lambda: None, missing=dict.fromkeys(SYSTEMS, why))
    from onnx_numpy import run_model

    inputs = _model_inputs(model)
    import mlc

    missing: dict[str, str] = {}
    if not hasattr(mlc, "import_onnx"):
        missing["mlc"] = "mlc.import_onnx is not available (the ONNX frontend)"

    def iree() -> tuple[str, str]:
        from systems import iree_text_from_onnx

        return iree_text_from_onnx(model), "onnx"

    return Workload(
        name,
        inputs,
        lambda *args: lambda: run_model(model, args),
        lambda: model,
        lambda: model,
        iree,
        missing=missing,
        tolerance=2e-3,
    )


def _model_inputs(model: Any) -> list[np.ndarray]:
    """Random inputs for the graph inputs that are not initializers (weights)."""
    from onnx import helper

    rng = _rng()
    weights = {i.name for i in model.graph.initializer}
    inputs: list[np.ndarray] = []
    for value in model.graph.input:
        if value.name in weights:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        inputs.append(rng.standard_normal(shape).astype(dtype))
    return inputs


SYSTEMS = ("mlc", "numpy", "onnxruntime", "IREE")


def full() -> list[Callable[[], Workload]]:
    return [
        lambda: matmul(256),
        lambda: matmul(1024),
        lambda: matmul(2048),
        lambda: chain(16 * 2**20),
        lambda: softmax(4096, 4096),
        lambda: onnx_model("MLP 64x784-1024-1024-10 (ONNX)", lambda m: m.mlp()),
        lambda: onnx_model("ResNet-style CNN, batch 1 (ONNX)", lambda m: m.cnn(batch=1)),
        lambda: onnx_model("ResNet-style CNN, batch 8 (ONNX)", lambda m: m.cnn(batch=8)),
        lambda: onnx_model(
            "transformer block seq 128, hidden 256, 4 heads (ONNX)",
            lambda m: m.transformer_block(seq=128, hidden=256, heads=4),
        ),
        lambda: example("mlp.mlir"),
        lambda: example("transformer_block.mlir"),
        lambda: example("convnet.mlir"),
        lambda: pagerank(2048, 10),
    ]


def quick() -> list[Callable[[], Workload]]:
    """Small sizes: the harness end to end in seconds (the pytest smoke test)."""
    return [
        lambda: matmul(32),
        lambda: chain(4096),
        lambda: softmax(16, 24),
        lambda: onnx_model("MLP (ONNX)", lambda m: m.mlp()),
        lambda: example("mlp.mlir"),
        lambda: pagerank(64, 3),
    ]
