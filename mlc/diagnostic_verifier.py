"""
`--verify-diagnostics`: check emitted diagnostics against `expected-*` comments.

The comments are MLIR's: `// expected-error {{text}}` expects an error on its own
line, `@+N` / `@-N` on the line N below / above, `@above` / `@below` on the
neighbouring line; `expected-warning`, `expected-remark` and `expected-note` work
alike. The text must occur in the message (a substring, as in MLIR). Every
diagnostic must be expected and every expectation met; each failure is itself a
diagnostic (`unexpected error: ...`, `expected error "..." was not produced`).
"""

import re
from dataclasses import dataclass

from mlc.diagnostics import Diagnostic, SourceLoc

EXPECTATION = re.compile(
    r"expected-(error|warning|remark|note)"
    r"(?:\s*@(?:([+-]\d+)|(above|below)))?"
    r"\s*\{\{(.*?)\}\}"
)


@dataclass
class Expectation:
    severity: str
    message: str
    line: int
    written_at: SourceLoc
    met: bool = False


def expectations(text: str, file: str, first_line: int = 1) -> list[Expectation]:
    """The `expected-*` comments of a source text, with the lines they refer to."""
    found: list[Expectation] = []
    for index, line in enumerate(text.splitlines()):
        lineno = first_line + index
        for match in EXPECTATION.finditer(line):
            severity, offset, relative, message = match.groups()
            target = lineno
            if offset:
                target += int(offset)
            elif relative:
                target += -1 if relative == "above" else 1
            where = SourceLoc(file, lineno, match.start() + 1)
            found.append(Expectation(severity, message, target, where))
    return found


def unmatched(emitted: list[Diagnostic], expected: list[Expectation]) -> list[Diagnostic]:
    """Diagnostics for every emitted diagnostic not expected, and every expectation not met."""
    problems: list[Diagnostic] = []
    for diagnostic in emitted:
        match = next(
            (
                e
                for e in expected
                if not e.met
                and e.severity == diagnostic.severity
                and diagnostic.location is not None
                and e.line == diagnostic.location.line
                and e.message in diagnostic.message
            ),
            None,
        )
        if match is None:
            problems.append(
                Diagnostic(
                    "error",
                    f"unexpected {diagnostic.severity}: {diagnostic.message}",
                    diagnostic.location,
                )
            )
        else:
            match.met = True
    problems.extend(
        Diagnostic(
            "error",
            f'expected {e.severity} "{e.message}" was not produced',
            e.written_at,
        )
        for e in expected
        if not e.met
    )
    return problems
