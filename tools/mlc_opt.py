"""
mlc-opt: parse IR, run a pass pipeline, print the result, with mlir-opt's habits.

    mlc-opt in.mlir -p 'canonicalize,cse' -o out.mlir
    mlc-opt --split-input-file --verify-diagnostics invalid.mlir
    cat in.mlir | mlc-opt - --print-op-generic

Errors are one-line MLIR-style diagnostics on stderr with exit status 1; `--debug`
shows the Python traceback of an internal error.
"""

import argparse
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from importlib.metadata import version
from typing import NoReturn

from mlc import driver, progress
from mlc.diagnostic_verifier import expectations, unmatched
from mlc.diagnostics import Diagnostic, capture, remarks_enabled
from mlc.pass_catalog import listing
from mlc.registry import PipelineError, parse_pipeline

PROG = "mlc-opt"


class UsageError(Exception):
    """A bad command line or an unreadable input: reported as `mlc-opt: error: ...`."""


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{PROG} --help')")


def version_text() -> str:
    return f"{PROG} {version('mlc')} (xDSL {version('xdsl')}, llvmlite {version('llvmlite')})"


def pass_names(value: str) -> frozenset[str]:
    return frozenset(n.strip() for n in value.split(",") if n.strip())


def boolean(value: str) -> bool:
    """An option's value as mlir-opt spells booleans: true/false, 1/0."""
    spelled = {"true": True, "1": True, "false": False, "0": False}
    if value.lower() not in spelled:
        raise argparse.ArgumentTypeError(f"'{value}' is not true or false")
    return spelled[value.lower()]


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog=PROG, description="mlc modular optimizer driver")
    p.add_argument(
        "input",
        nargs="?",
        default="-",
        help="input: MLIR text, or an .onnx model ('-' or none: stdin)",
    )
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("-p", "--passes", default="", help="pass pipeline, e.g. 'cse,dce'")
    p.add_argument(
        "--split-input-file", action="store_true", help="process each '// -----' chunk separately"
    )
    p.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check diagnostics against expected-* comments",
    )
    p.add_argument(
        "--remarks",
        action="store_true",
        help="print optimisation remarks (stderr)",
    )
    p.add_argument(
        "--print-op-generic",
        "--mlir-print-op-generic",
        action="store_true",
        help="print ops in the generic form",
    )
    p.add_argument(
        "--print-debuginfo",
        "--mlir-print-debuginfo",
        action="store_true",
        help="print op locations",
    )
    p.add_argument(
        "--print-ir-before-all",
        "--mlir-print-ir-before-all",
        action="store_true",
        help="print the IR before every pass (stderr)",
    )
    p.add_argument(
        "--print-ir-after-all",
        "--mlir-print-ir-after-all",
        action="store_true",
        help="print the IR after every pass (stderr)",
    )
    p.add_argument(
        "--print-ir-before",
        type=pass_names,
        metavar="PASSES",
        help="print the IR before the named passes (stderr)",
    )
    p.add_argument(
        "--print-ir-after",
        type=pass_names,
        metavar="PASSES",
        help="print the IR after the named passes (stderr)",
    )
    p.add_argument(
        "--allow-unregistered-dialect", action="store_true", help="accept ops of unknown dialects"
    )
    p.add_argument(
        "--verify-roundtrip",
        action="store_true",
        help="check that the output re-parses to the same IR in both forms",
    )
    p.add_argument(
        "--verify-each",
        type=boolean,
        nargs="?",
        const=True,
        default=True,
        metavar="BOOL",
        help="verify the IR after every pass, naming the pass that broke it (default: "
        "true; --verify-each=false verifies once, after the last pass)",
    )
    p.add_argument(
        "--timing", "--mlir-timing", action="store_true", help="report wall time per pass (stderr)"
    )
    p.add_argument(
        "--list-passes",
        action="store_const",
        const="mlc",
        help="list mlc's passes and xDSL's for mlc's dialects, with descriptions, and exit",
    )
    # An option of its own, not a value of --list-passes: `--list-passes in.mlir` stays valid.
    p.add_argument(
        "--list-passes=all",
        dest="list_passes",
        action="store_const",
        const="all",
        help="list every pass, xDSL's for other dialects and targets too, and exit",
    )
    p.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def dump_set(all_flag: bool, names: frozenset[str] | None) -> frozenset[str] | None:
    return frozenset({"*"}) if all_flag else names


def read_input(path: str) -> tuple[str, str]:
    """The input text and the name diagnostics use for it."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode(), "<stdin>"
        with open(path, "rb") as f:
            return f.read().decode(), path
    except OSError as error:
        raise UsageError(f"cannot read '{path}': {error.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"'{path}' is not UTF-8 text") from None


def options_from(args: argparse.Namespace) -> driver.OptOptions:
    try:
        passes = parse_pipeline(args.passes)
    except PipelineError as error:
        raise UsageError(str(error)) from None
    return driver.OptOptions(
        passes=passes,
        generic=args.print_op_generic,
        debuginfo=args.print_debuginfo,
        allow_unregistered_dialect=args.allow_unregistered_dialect,
        verify_roundtrip=args.verify_roundtrip,
        print_before=dump_set(args.print_ir_before_all, args.print_ir_before),
        print_after=dump_set(args.print_ir_after_all, args.print_ir_after),
        verify_each=args.verify_each,
    )


def run_onnx(args: argparse.Namespace) -> int:
    """Import an ONNX model, run the passes on it, and print it."""
    from mlc.frontends.onnx import import_onnx
    from mlc.frontends.onnx.model import OnnxImportError

    options = options_from(args)
    if args.split_input_file or args.verify_diagnostics:
        raise UsageError("--split-input-file and --verify-diagnostics take MLIR text, not ONNX")
    timer = driver.Timer()
    try:
        with shown(timer, args), timer.phase("Import"):
            module = import_onnx(args.input)
    except OnnxImportError as error:
        report(error.diagnostics, {})
        return 1
    with remarks_enabled(args.remarks), shown(timer, args):
        result = driver.transform(module, options, timer, sys.stderr)
    report(result.diagnostics, {})
    write_output(result.output or "", args.output, result.output is None)
    if args.timing:
        sys.stderr.write(timer.report())
    return 0 if result.output is not None else 1


def run(args: argparse.Namespace) -> int:
    if args.input.endswith(".onnx"):
        return run_onnx(args)
    options = options_from(args)
    text, name = read_input(args.input)
    chunks = driver.split_chunks(text) if args.split_input_file else [(text, 1)]
    timer = driver.Timer()
    outputs: list[str] = []
    failed = False
    for chunk, first_line in chunks:
        if args.verify_diagnostics:
            with capture() as emitted:
                result = driver.process(chunk, name, options, first_line=first_line, timer=timer)
            problems = unmatched(
                [*emitted, *result.diagnostics], expectations(chunk, name, first_line)
            )
        else:
            with remarks_enabled(args.remarks), shown(timer, args):
                result = driver.process(chunk, name, options, first_line=first_line, timer=timer)
            problems = result.diagnostics
        report(problems, {name: text})
        failed |= bool(problems)
        if result.output is not None:
            outputs.append(result.output)
    write_output("// -----\n".join(outputs), args.output, failed)
    if args.timing:
        sys.stderr.write(timer.report())
    return 1 if failed else 0


def shown(timer: driver.Timer, args: argparse.Namespace) -> AbstractContextManager[None]:
    """With `--timing`, a progress line for a long run (`mlc.progress`: on a terminal)."""
    return progress.display(timer, args.input or "-") if args.timing else nullcontext()


def report(problems: Sequence[Diagnostic], sources: dict[str, str]) -> None:
    for problem in problems:
        print(problem.render(sources), file=sys.stderr)


def write_output(text: str, path: str | None, failed: bool) -> None:
    """Write to stdout, or to `path` only on success (never a half-written file)."""
    if path is None:
        sys.stdout.write(text)
        return
    if failed:
        return
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as error:
        raise UsageError(f"cannot write '{path}': {error.strerror}") from None


def guarded(
    prog: str,
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    body: Callable[[argparse.Namespace], int],
) -> int:
    """
    Parse a tool's command line and run its body with the tools' error habits: a usage
    error or an internal error is one line on stderr and exit status 1; `--debug` shows
    the traceback instead.
    """
    args = None
    try:
        args = parser.parse_args(argv)
        return body(args)
    except UsageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        if args is not None and args.debug:
            raise
        print(
            f"{prog}: internal error: {type(error).__name__}: {error} "
            "(run with --debug for a traceback)",
            file=sys.stderr,
        )
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    def body(args: argparse.Namespace) -> int:
        if args.version:
            print(version_text())
            return 0
        if args.list_passes:
            sys.stdout.write(listing(include_all=args.list_passes == "all"))
            return 0
        return run(args)

    return guarded(PROG, build_parser(), argv, body)


if __name__ == "__main__":
    sys.exit(main())
