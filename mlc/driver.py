"""
The parse -> verify -> passes -> print loop that `mlc-opt` (and later tools) drive.

Everything a user can get wrong comes back as `Diagnostic`s, never as an exception:
malformed text, IR that does not verify, a pass that cannot handle an op. The IR is
verified after every pass, as `mlir-opt` does, so a pass that breaks the IR is
caught at the pass that broke it, which the error names (`verify_each`; off, the IR
is verified once, after the last pass). Instrumentation (IR dumps before/after passes,
wall time per phase) is optional and goes to a separate stream.
"""

import difflib
import re
from dataclasses import dataclass
from typing import TextIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, ParseError

from mlc import diagnostics, pipeline
from mlc.diagnostics import Diagnostic, OpError
from mlc.ir import parse_module, print_module
from mlc.registry import make_context
from mlc.timing import Timer

SPLIT_MARKER = re.compile(r"^// -----\s*$")


@dataclass(frozen=True)
class OptOptions:
    passes: tuple[ModulePass, ...] = ()
    generic: bool = False
    debuginfo: bool = False
    allow_unregistered_dialect: bool = False
    verify_roundtrip: bool = False
    print_before: frozenset[str] | None = None  # pass names; None: none, "*" in it: all
    print_after: frozenset[str] | None = None
    verify_each: bool = True  # verify after every pass, not only after the last


@dataclass
class ChunkResult:
    output: str | None  # None when the chunk failed
    diagnostics: list[Diagnostic]


def split_chunks(text: str) -> list[tuple[str, int]]:
    """Split at `// -----` lines, keeping each chunk's first line number."""
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    first = 1
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        if SPLIT_MARKER.match(line):
            chunks.append(("".join(current), first))
            current, first = [], lineno + 1
        else:
            current.append(line)
    chunks.append(("".join(current), first))
    return chunks


def wants_dump(names: frozenset[str] | None, pass_name: str) -> bool:
    return names is not None and ("*" in names or pass_name in names)


def roundtrip_problems(module: ModuleOp, options: OptOptions) -> list[Diagnostic]:
    """Check print(parse(print(m))) == print(m) in the custom and the generic form."""
    problems: list[Diagnostic] = []
    for generic in (False, True):
        text = print_module(module, generic=generic)
        try:
            ctx = make_context(options.allow_unregistered_dialect)
            again = print_module(parse_module(text, ctx=ctx), generic=generic)
        except ParseError as error:
            form = "generic" if generic else "custom"
            problems.append(
                Diagnostic("error", f"the printed {form} form does not parse: {error.msg}")
            )
            continue
        if again != text:
            diff = "".join(
                list(difflib.unified_diff(text.splitlines(True), again.splitlines(True)))[2:]
            )
            form = "generic" if generic else "custom"
            problems.append(Diagnostic("error", f"the {form} form does not round-trip:\n{diff}"))
    return problems


def run_passes(
    module: ModuleOp, options: OptOptions, timer: Timer, dump: TextIO
) -> list[Diagnostic]:
    """Apply the passes, verifying after each; the diagnostics of the first failure."""
    ctx = make_context(options.allow_unregistered_dialect)
    for module_pass in options.passes:
        if wants_dump(options.print_before, module_pass.name):
            dump.write(f"// -----// IR Dump Before {module_pass.name} //----- //\n")
            dump.write(print_module(module, generic=options.generic, debuginfo=options.debuginfo))
        try:
            with timer.phase(module_pass.name):
                module_pass.apply(ctx, module)
        except OpError as error:
            return [error.diagnostic()]
        except DiagnosticException as error:
            message = diagnostics.one_line(str(error))
            return [Diagnostic("error", f"pass '{module_pass.name}' failed: {message}")]
        if options.verify_each:
            with timer.phase("Verifier"):
                if errors := pipeline.verify_after(module, module_pass.name):
                    return errors
        if wants_dump(options.print_after, module_pass.name):
            dump.write(f"// -----// IR Dump After {module_pass.name} //----- //\n")
            dump.write(print_module(module, generic=options.generic, debuginfo=options.debuginfo))
    if not options.verify_each and options.passes:
        with timer.phase("Verifier"):
            return diagnostics.verify_module(module)
    return []


def process(
    text: str,
    name: str,
    options: OptOptions,
    *,
    first_line: int = 1,
    timer: Timer | None = None,
    dump: TextIO | None = None,
) -> ChunkResult:
    """Parse, verify, transform and print one chunk of IR text."""
    import sys

    timer = timer or Timer()
    dump = dump or sys.stderr
    try:
        with timer.phase("Parser"):
            ctx = make_context(options.allow_unregistered_dialect)
            module = parse_module(text, name, ctx=ctx, first_line=first_line)
    except ParseError as error:
        return ChunkResult(None, [diagnostics.from_parse_error(error)])
    with timer.phase("Verifier"):
        errors = diagnostics.verify_module(module)
    if errors:
        return ChunkResult(None, errors)
    return transform(module, options, timer, dump)


def transform(module: ModuleOp, options: OptOptions, timer: Timer, dump: TextIO) -> ChunkResult:
    """Run the passes on a verified module (parsed or imported) and print it."""
    if errors := run_passes(module, options, timer, dump):
        return ChunkResult(None, errors)
    if options.verify_roundtrip and (errors := roundtrip_problems(module, options)):
        return ChunkResult(None, errors)
    with timer.phase("Output"):
        output = print_module(
            module, generic=options.generic, debuginfo=options.debuginfo, blobs=True
        )
    return ChunkResult(output, [])
