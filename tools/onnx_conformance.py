"""
ONNX conformance: run onnx's backend node tests through `mlc.compile` and onnxruntime.

    python -m mlc.tools.onnx_conformance             # static shapes, docs/onnx-support.md
    python -m mlc.tools.onnx_conformance --dynamic   # every input dim forced to `?`
    python -m mlc.tools.onnx_conformance --both      # both, in one report
    python -m mlc.tools.onnx_conformance --ops Relu,Gemm --no-doc   # a subset

The node tests come from the installed onnx package: its node test cases, with the data
they compute, are written once into `--data` (default `build/onnx-node-tests`). A test
belongs to the op of its node (an `_expanded` test, the op's function body, to the op it
expands). The tests of the ops mlc's ONNX frontend supports run on mlc and on
onnxruntime, compared with the test's outputs at onnx's tolerances (rtol 1e-3, atol 1e-7
unless the test says otherwise). The score is over the tests onnxruntime passes.

Some ONNX inputs set shapes rather than data (Reshape's shape, Slice's starts, a
reduction's axes). `mlc.compile` gives such a model as a `ShapeSpecializedModel`, which
reads those inputs at run time and compiles a variant per value set. `--inputs runtime`
runs the tests that way, every input given at run time as the tests give them;
`--inputs bound` (the default) binds the test's values of those inputs as initializers
first and compiles that model; `--inputs both` runs both (the report counts the tests
that bound or specialised on inputs):

    python -m mlc.tools.onnx_conformance --both --inputs both --ops Slice,Pad --no-doc
"""

import argparse
import multiprocessing
import re
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from mlc.extras import MissingDependencyError, require

DEFAULT_DATA = Path("build/onnx-node-tests")
DEFAULT_DOC = Path("docs/onnx-support.md")


@dataclass
class Outcome:
    """One test on one system: passed, or why not."""

    test: str
    op: str
    mlc: str  # "pass" or the reason it failed
    ort: str
    bound: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass
class Case:
    name: str
    folder: Path
    rtol: float = 1e-3
    atol: float = 1e-7
    datasets: list[tuple[list[np.ndarray], list[np.ndarray]]] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Finding and reading tests
# ---------------------------------------------------------------------------


def generate(data: Path) -> Path:
    """
    The node-test folder under `data`, written from onnx's node test cases if missing.

    Same layout as onnx's generated data (`model.onnx`, `test_data_set_N/input_M.pb`),
    plus `data.json` where a test sets its own tolerances.
    """
    import json

    from onnx.backend.test.case import node as node_cases

    node = data / "node"
    if node.is_dir() and any(node.iterdir()):
        return node
    print(f"writing onnx's node tests into {node} ...", file=sys.stderr)
    for case in node_cases.collect_testcases():
        folder = node / case.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        if (case.rtol, case.atol) != (1e-3, 1e-7):
            (folder / "data.json").write_text(json.dumps({"rtol": case.rtol, "atol": case.atol}))
        for i, (inputs, outputs) in enumerate(case.data_sets):
            dataset = folder / f"test_data_set_{i}"
            dataset.mkdir(exist_ok=True)
            _write_values(dataset, "input", inputs, case.model.graph.input)
            _write_values(dataset, "output", outputs, case.model.graph.output)
    return node


def _write_values(
    folder: Path, kind: str, values: Sequence[Any], infos: Sequence[onnx.ValueInfoProto]
) -> None:
    for j, (value, info) in enumerate(zip(values, infos, strict=False)):
        if info.type.WhichOneof("value") != "tensor_type":
            continue  # sequences, maps, optionals: mlc takes tensors only
        proto = (
            value
            if isinstance(value, onnx.TensorProto)
            else numpy_helper.from_array(np.asarray(value), info.name)
        )
        (folder / f"{kind}_{j}.pb").write_bytes(proto.SerializeToString())


EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def op_of(folder: Path) -> str | None:
    """
    The op a test is about: the op type of its node (tests of one node, besides any
    Constants), or for an `_expanded` test (the op's function body) that of its sibling.
    """
    if EXPANDED.search(folder.name):
        sibling = folder.parent / EXPANDED.sub("", folder.name)
        return op_of(sibling) if (sibling / "model.onnx").exists() else None
    graph = onnx.load(str(folder / "model.onnx"), load_external_data=False).graph
    kinds = {n.op_type for n in graph.node if n.domain in ("", "ai.onnx")} - {"Constant"}
    if len(kinds) == 1:
        return kinds.pop()
    return "Constant" if {n.op_type for n in graph.node} == {"Constant"} else None


def read_tensor(path: Path) -> np.ndarray:
    proto = onnx.TensorProto()
    proto.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(proto)


def load_case(folder: Path) -> Case:
    import json

    case = Case(folder.name, folder)
    if (meta := folder / "data.json").exists():
        data = json.loads(meta.read_text())
        case.rtol, case.atol = data.get("rtol", case.rtol), data.get("atol", case.atol)
    for dataset in sorted(folder.glob("test_data_set_*")):
        inputs = [read_tensor(p) for p in sorted(dataset.glob("input_*.pb"), key=_index)]
        outputs = [read_tensor(p) for p in sorted(dataset.glob("output_*.pb"), key=_index)]
        case.datasets.append((inputs, outputs))
    return case


def _index(path: Path) -> int:
    return int(path.stem.rsplit("_", 1)[1])


# ---------------------------------------------------------------------------
# Running one test
# ---------------------------------------------------------------------------


def compare(got: Sequence[Any], want: Sequence[np.ndarray], rtol: float, atol: float) -> str:
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        g = np.asarray(g)
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape}, expected {w.shape}"
        if g.dtype != w.dtype:
            return f"output {i}: dtype {g.dtype}, expected {w.dtype}"
        if w.dtype.kind in "fc":
            ok = np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(g, w)
        if not ok:
            worst = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)), initial=0))
            return f"output {i}: wrong values (max abs error {worst:.3g})"
    return "pass"


def run_ort(model: onnx.ModelProto, case: Case) -> str:
    import onnxruntime as ort

    try:
        options = ort.SessionOptions()
        options.log_severity_level = 4
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        names = [i.name for i in session.get_inputs()]
        for inputs, outputs in case.datasets:
            got = session.run(None, dict(zip(names, inputs, strict=False)))
            if (verdict := compare(got, outputs, case.rtol, case.atol)) != "pass":
                return verdict
    except Exception as error:
        return f"error: {first_line(str(error))}"
    return "pass"


def make_dynamic(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose graph inputs and outputs have every dim unknown (`?`)."""
    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(model)
    graph = dynamic.graph
    for info in [*graph.input, *graph.output]:
        if info.type.WhichOneof("value") != "tensor_type":
            continue
        for i, dim in enumerate(info.type.tensor_type.shape.dim):
            dim.Clear()
            dim.dim_param = f"{info.name}_{i}" if info in graph.input else ""
    del graph.value_info[:]
    return dynamic


def bind(model: onnx.ModelProto, name: str, value: np.ndarray) -> onnx.ModelProto:
    """A copy where graph input `name` is an initializer holding `value`."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    bound.graph.initializer.append(numpy_helper.from_array(value, name))
    kept = [i for i in bound.graph.input if i.name != name]
    del bound.graph.input[:]
    bound.graph.input.extend(kept)
    return bound


def run_mlc(
    model: onnx.ModelProto, case: Case, runtime: bool = False
) -> tuple[str, tuple[str, ...]]:
    """
    The verdict on mlc, and the inputs that decide shapes: given at run time (`runtime`),
    or bound at import time to the first data set's values.
    """
    import mlc
    from mlc.compiler.shape_inputs import ShapeSpecializedModel, bind

    names = [i.name for i in _graph_inputs(model)]
    try:
        executable = mlc.compile(model)
        bound: tuple[str, ...] = ()
        if isinstance(executable, ShapeSpecializedModel):
            executable(*case.datasets[0][0][: len(names)])  # finds every shape input
            bound = tuple(executable.shape_inputs)
            if not runtime:
                first = dict(zip(names, case.datasets[0][0], strict=False))
                executable = mlc.compile(bind(model, {n: first[n] for n in bound}))
    except Exception as error:
        return f"import/compile: {first_line(str(error))}", ()
    given = names if runtime else [n for n in names if n not in bound]
    for inputs, outputs in case.datasets:
        values = dict(zip(names, inputs, strict=False))
        try:
            got = executable(*[values[n] for n in given])
        except Exception as error:
            return f"run: {first_line(str(error))}", bound
        got = list(got) if isinstance(got, tuple) else [got]
        if (verdict := compare(got, outputs, case.rtol, case.atol)) != "pass":
            return verdict, bound
    return "pass", bound


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    initializers = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else "?")[:200]


def run_case(job: tuple[Path, str, bool, bool]) -> Outcome:
    folder, op, dynamic, runtime = job
    try:
        case = load_case(folder)
        model = onnx.load(str(folder / "model.onnx"))
    except Exception as error:
        return Outcome(folder.name, op, f"unreadable test: {first_line(str(error))}", "?")
    return check(model, case, op, dynamic, runtime)


def check(
    model: onnx.ModelProto, case: Case, op: str, dynamic: bool, runtime: bool = False
) -> Outcome:
    """One test on onnxruntime and on mlc (shape inputs given at run time: `runtime`)."""
    start = time.perf_counter()
    if not case.datasets:
        return Outcome(case.name, op, "no test data", "no test data")
    if any(i.type.WhichOneof("value") != "tensor_type" for i in model.graph.input):
        return Outcome(case.name, op, "unsupported: non-tensor inputs", run_ort(model, case))
    ort_verdict = run_ort(model, case)
    try:
        mlc_verdict, bound = run_mlc(make_dynamic(model) if dynamic else model, case, runtime)
    except Exception as error:  # a bug in mlc: recorded, not fatal to the run
        detail = first_line("".join(traceback.format_exception_only(error)))
        return Outcome(case.name, op, f"crash: {detail}", ort_verdict)
    return Outcome(case.name, op, mlc_verdict, ort_verdict, bound, time.perf_counter() - start)


def cases_of(module: str) -> list[tuple[onnx.ModelProto, Case]]:
    """
    The node tests one onnx case module (e.g. `gemm`) defines, made in memory: a fast
    way to a few tests without writing them all out.
    """
    import importlib

    from onnx.backend.test.case import node as node_cases

    # Importing a case module runs its exports, which record its test cases.
    before = len(node_cases._NodeTestCases)  # pyright: ignore[reportPrivateUsage]
    importlib.import_module(f"onnx.backend.test.case.node.{module}")
    made = node_cases._NodeTestCases[before:]  # pyright: ignore[reportPrivateUsage]
    return [
        (
            c.model,
            Case(
                c.name,
                Path(c.name),
                c.rtol,
                c.atol,
                [(_arrays(i), _arrays(o)) for i, o in c.data_sets],
            ),
        )
        for c in made
    ]


def _arrays(values: Sequence[Any]) -> list[Any]:
    """A data set's values, a numpy scalar (how a case may give a rank-0 tensor) as an
    array; sequences stay lists."""
    return [np.asarray(v) if isinstance(v, np.generic) else v for v in values]


# ---------------------------------------------------------------------------
# The whole suite and its report
# ---------------------------------------------------------------------------


def select(node: Path, ops: Sequence[str]) -> list[tuple[Path, str]]:
    """The test folders of `ops`, with the op each belongs to."""
    jobs = []
    for folder in sorted(node.iterdir()):
        if (folder / "model.onnx").exists() and (op := op_of(folder)) in ops:
            jobs.append((folder, op))
    return jobs


def run_suite(
    jobs: list[tuple[Path, str]], dynamic: bool, workers: int, runtime: bool = False
) -> list[Outcome]:
    work = [(folder, op, dynamic, runtime) for folder, op in jobs]
    if workers <= 1:
        return [run_case(job) for job in work]
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, maxtasksperchild=40) as pool:
        return list(pool.imap(run_case, work, chunksize=4))


@dataclass
class Score:
    passed: int  # by mlc, among the tests onnxruntime passes
    total: int  # tests onnxruntime passes
    all_tests: int
    mlc_passed: int

    @property
    def percent(self) -> float:
        return 100.0 * self.passed / self.total if self.total else 100.0


def score(outcomes: Sequence[Outcome]) -> Score:
    reference = [o for o in outcomes if o.ort == "pass"]
    return Score(
        sum(o.mlc == "pass" for o in reference),
        len(reference),
        len(outcomes),
        sum(o.mlc == "pass" for o in outcomes),
    )


def reason_class(verdict: str) -> str:
    """A short category for a failure, for the summary."""
    if "bf16" in verdict or "BFLOAT16" in verdict or "element type" in verdict:
        return "unsupported element type"
    if verdict.startswith("import/compile"):
        return "import or compile error"
    if verdict.startswith("run"):
        return "run-time error"
    if verdict.startswith("crash"):
        return "internal error"
    if "wrong values" in verdict:
        return "wrong values"
    return "other"


def summary_line(label: str, outcomes: Sequence[Outcome]) -> str:
    s = score(outcomes)
    typed = score([o for o in outcomes if reason_class(o.mlc) != "unsupported element type"])
    bound = sum(bool(o.bound) for o in outcomes if o.mlc == "pass")
    how = "specialised on inputs at run time" if "run time" in label else "bound inputs"
    return (
        f"{label}: {s.passed}/{s.total} ({s.percent:.1f}%) of the tests onnxruntime passes, "
        f"{typed.passed}/{typed.total} ({typed.percent:.1f}%) of those in supported element "
        f"types; {s.mlc_passed}/{s.all_tests} of all tests; {bound} passing tests {how}"
    )


ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
MAGNITUDE = re.compile(r" \(max abs error [^)]*\)")


def stable(verdict: str) -> str:
    """
    A verdict as the report gives it: the same on every run of the same code. Object
    addresses go, and so does the size of a wrong value's error (random ops, such as
    onnxruntime's training Dropout, and parallel reductions vary in it); `-v` prints it.
    """
    return MAGNITUDE.sub("", ADDRESS.sub("0x?", verdict)).replace("|", "/")


def write_doc(path: Path, results: dict[str, list[Outcome]], ops: Sequence[str]) -> None:
    path.write_text(report(results, ops))


def report(results: dict[str, list[Outcome]], ops: Sequence[str]) -> str:
    """The Markdown report of `results` (mode -> outcomes): a function of the outcomes
    as sets, whatever order they came in."""
    lines = [
        "# ONNX support",
        "",
        "<!-- Generated by `make conformance` (tools/onnx_conformance.py); do not edit. -->",
        "",
        "mlc's ONNX frontend (`mlc.import_onnx`, `mlc/frontends/onnx/`) against the node tests",
        f"of the installed onnx package ({onnx.__version__}, opsets up to "
        f"{onnx.defs.onnx_opset_version()}), run through `mlc.compile` on the CPU and through",
        "onnxruntime in the same run, at onnx's tolerances. *Score* counts the tests that",
        "onnxruntime passes; *dynamic* runs every test with all input dims unknown (`?`).",
        "Inputs that fix shapes (Reshape's shape, Slice's starts, axes, pads) are bound as",
        "initializers when the importer needs them at import time; in the modes *inputs at",
        "run time* they are given at run time, and the compiled model specialises on them.",
        "",
        "## Summary",
        "",
    ]
    for mode, outcomes in results.items():
        lines.append(f"- {summary_line(mode, outcomes)}")
    lines += ["", "## Per op", ""]
    modes = list(results)
    header = "| op | " + " | ".join(f"{m}: mlc / ort-passing / all" for m in modes) + " |"
    lines += [header, "|---|" + "---|" * len(modes)]
    for op in sorted(ops):
        cells = []
        for mode in modes:
            mine = [o for o in results[mode] if o.op == op]
            s = score(mine)
            cells.append(f"{s.passed} / {s.total} / {s.all_tests}" if mine else "no tests")
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    lines += ["", "## Failures", ""]
    for mode, outcomes in results.items():
        failures = [o for o in outcomes if o.mlc != "pass"]
        counts = Counter(reason_class(o.mlc) for o in failures)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        listed = ", ".join(f"{kind}: {n}" for kind, n in ranked)
        lines += [f"### {mode} ({len(failures)}: {listed or 'none'})", ""]
        by_op: dict[str, list[Outcome]] = defaultdict(list)
        for outcome in failures:
            by_op[outcome.op].append(outcome)
        for op in sorted(by_op):
            for o in sorted(by_op[op], key=lambda o: o.test):
                ort = "" if o.ort == "pass" else f" (onnxruntime fails too: {stable(o.ort)})"
                lines.append(f"- `{o.test}` ({op}): {stable(o.mlc)}{ort}")
        lines.append("")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="onnx_conformance", description="run onnx's node tests through mlc and onnxruntime"
    )
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="generated test data folder")
    p.add_argument("--dynamic", action="store_true", help="force every input dim dynamic")
    p.add_argument("--both", action="store_true", help="run static, then dynamic")
    p.add_argument(
        "--inputs",
        choices=["bound", "runtime", "both"],
        default="bound",
        help="shape inputs bound at import time (default), given at run time, or both",
    )
    p.add_argument("--ops", help="comma-separated op types (default: all supported)")
    p.add_argument("--doc", type=Path, default=DEFAULT_DOC, help="the Markdown report to write")
    p.add_argument("--no-doc", action="store_true", help="print the summary only")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default: 2)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from mlc.frontends.onnx.ops import supported_ops

    args = build_parser().parse_args(argv)
    try:
        require("onnxruntime", "onnx_conformance (which runs onnx's node tests on onnxruntime too)")
    except MissingDependencyError as error:
        print(f"onnx_conformance: error: {error}", file=sys.stderr)
        return 1
    ops = supported_ops()
    if args.ops:
        wanted = [o.strip() for o in args.ops.split(",") if o.strip()]
        if unknown := [o for o in wanted if o not in ops]:
            print(
                f"onnx_conformance: error: unsupported ops: {', '.join(unknown)}", file=sys.stderr
            )
            return 1
        ops = wanted
    jobs = select(generate(args.data), ops)
    shapes = ["static", "dynamic"] if args.both else ["dynamic" if args.dynamic else "static"]
    inputs = {"bound": [False], "runtime": [True], "both": [False, True]}[args.inputs]
    modes = {
        f"{shape}, inputs at run time" if runtime else shape: (shape == "dynamic", runtime)
        for shape in shapes
        for runtime in inputs
    }
    results: dict[str, list[Outcome]] = {}
    for mode, (dynamic, runtime) in modes.items():
        start = time.perf_counter()
        results[mode] = run_suite(jobs, dynamic, args.workers, runtime)
        elapsed = time.perf_counter() - start
        print(f"{summary_line(mode, results[mode])} [{elapsed:.0f} s]")
        if args.verbose:
            for o in results[mode]:
                if o.mlc != "pass":
                    print(f"  {o.test}: {o.mlc}")
        if not args.no_doc:  # after each mode, so a long run leaves what it has
            write_doc(args.doc, results, ops)
    if not args.no_doc:
        print(f"wrote {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
