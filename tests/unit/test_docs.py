"""
Keep the `ml` dialect reference (docs/dialects/ml.md) and the op docstrings honest.

The reference has one `### ml.<name>` entry per op of the `ML` dialect and none for ops
that do not exist; every ```mlir block in it is a complete module that parses, verifies
and round-trips. Every op's docstring holds a ```mlir example of the op (STYLE.md R6),
which must parse and verify once its free values are declared as function arguments.
"""

import inspect
import re
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet
from xdsl.ir import Operation

from mlc.diagnostics import verify_module
from mlc.dialects.ml import ML
from mlc.ir import parse_module, print_module

DOC = Path(__file__).resolve().parents[2] / "docs" / "dialects" / "ml.md"
OP_NAMES = sorted(op.name for op in ML.operations)

MLIR_BLOCK = re.compile(r"^```mlir\n(.*?)^```", re.DOTALL | re.MULTILINE)
HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)


def doc_text() -> str:
    return DOC.read_text()


def op_entries(text: str) -> dict[str, str]:
    """The text of each `### ml.<name>` entry, up to the next heading of any level."""
    headings = list(HEADING.finditer(text))
    entries: dict[str, str] = {}
    for this, following in zip(headings, [*headings[1:], None], strict=True):
        title = this.group(2).strip()
        if this.group(1) == "###" and title.startswith("ml."):
            end = following.start() if following else len(text)
            entries[title] = text[this.end() : end]
    return entries


def mentions(block: str, op_name: str) -> bool:
    """Whether an MLIR block uses the op, in the pretty or the generic form."""
    name = re.escape(op_name)
    return re.search(rf'(?:^|[\s=])(?:{name}|"{name}")[\s(]', block) is not None


# ---------------------------------------------------------------------------
# Entries
# ---------------------------------------------------------------------------


def test_doc_exists():
    assert DOC.is_file()


def test_every_op_has_an_entry():
    missing = set(OP_NAMES) - set(op_entries(doc_text()))
    assert not missing, f"ops without a `### <name>` entry in {DOC.name}: {sorted(missing)}"


def test_no_entry_for_an_unknown_op():
    unknown = set(op_entries(doc_text())) - set(OP_NAMES)
    assert not unknown, f"entries in {DOC.name} for ops that do not exist: {sorted(unknown)}"


def test_entries_are_unique():
    titles = re.findall(r"^### (ml\.\S+)", doc_text(), re.MULTILINE)
    assert len(titles) == len(set(titles))


@pytest.mark.parametrize("name", OP_NAMES)
def test_entry_has_an_example_of_the_op(name: str):
    entry = op_entries(doc_text()).get(name)
    assert entry is not None, f"no entry for {name}"
    blocks = MLIR_BLOCK.findall(entry)
    assert any(mentions(b, name) for b in blocks), f"no ```mlir example using {name}"


def test_entry_checks_fail_on_drift():
    """The entry helpers see a missing and an unknown op (so the checks above can fail)."""
    text = "# ml\n### ml.add\n```mlir\nml.add\n```\n## Other\n### ml.frobnicate\ntext\n"
    entries = op_entries(text)
    assert set(entries) == {"ml.add", "ml.frobnicate"}
    assert "ml.frobnicate" not in OP_NAMES
    assert set(OP_NAMES) - set(entries)
    assert "Other" not in entries["ml.add"]


def test_mentions():
    assert mentions("  %s = ml.add %a, %b : ...", "ml.add")
    assert mentions('  %s = "ml.add"(%a, %b) : ...', "ml.add")
    assert not mentions("  %s = ml.add_n %a : ...", "ml.add")
    assert not mentions("  %s = ml.reduce_max %a : ...", "ml.max")


# ---------------------------------------------------------------------------
# Every ```mlir block of the reference
# ---------------------------------------------------------------------------


def doc_blocks() -> list[ParameterSet]:
    """Each block with the line it starts on and the heading it stands under."""
    text = doc_text()
    params: list[ParameterSet] = []
    for match in MLIR_BLOCK.finditer(text):
        before = text[: match.start()]
        headings = HEADING.findall(before)
        title = headings[-1][1] if headings else "top"
        line = before.count("\n") + 2  # the block's first line, after the fence
        params.append(pytest.param(match.group(1), line, id=f"line{line}-{title}"))
    return params


def test_doc_has_blocks():
    assert len(doc_blocks()) >= len(OP_NAMES)


@pytest.mark.parametrize(("block", "line"), doc_blocks())
def test_doc_block_parses_and_verifies(block: str, line: int):
    module = parse_module(block, str(DOC), first_line=line)
    diagnostics = [d.render() for d in verify_module(module)]
    assert diagnostics == []


@pytest.mark.parametrize(("block", "line"), doc_blocks())
def test_doc_block_round_trips(block: str, line: int):
    pretty = print_module(parse_module(block, first_line=line))
    assert print_module(parse_module(pretty)) == pretty
    generic = print_module(parse_module(pretty), generic=True)
    assert print_module(parse_module(generic)) == pretty


# ---------------------------------------------------------------------------
# The ```mlir example of every op docstring
# ---------------------------------------------------------------------------


def split_types(text: str) -> list[str]:
    """Split a comma-separated type list at the top level (not inside `<...>`)."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        depth += char in "<([{"
        depth -= char in ">)]}"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()] if current.strip() else parts


def as_function(line: str) -> str:
    """
    Wrap one docstring op line in a function that defines its free values.

    The values used are the function's arguments, typed from the op's functional type
    (`(t0, t1) -> r`), and the function returns the op's result.
    """
    result, rest = (part.strip() for part in line.split("=", 1))
    body, functional = rest.rsplit(" : ", 1)
    inputs, output = (part.strip() for part in functional.split("->"))
    input_types = split_types(inputs.removeprefix("(").removesuffix(")"))
    body_without_attrs = re.sub(r"\{.*\}", "", body)
    operands = re.findall(r"%[\w.$-]+", body_without_attrs)
    assert len(operands) == len(input_types), f"operands and types differ in: {line}"
    arguments = ", ".join(f"{v}: {t}" for v, t in zip(operands, input_types, strict=True))
    return (
        f"func.func @example({arguments}) -> {output} {{\n"
        f"  {line}\n"
        f"  func.return {result} : {output}\n"
        "}\n"
    )


def docstring_examples() -> list[ParameterSet]:
    params: list[ParameterSet] = []
    for op in sorted(ML.operations, key=lambda o: o.name):
        doc = inspect.getdoc(op) or ""
        for block in MLIR_BLOCK.findall(doc + "\n"):
            for line in block.strip().splitlines():
                params.append(pytest.param(op.name, line.strip(), id=op.name))
    return params


OPS = sorted(ML.operations, key=lambda o: o.name)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_docstring_has_an_example(op: type[Operation]):
    doc = inspect.getdoc(op) or ""
    summary = doc.splitlines()[0] if doc else ""
    assert summary, f"{op.__name__} has no docstring"
    blocks = MLIR_BLOCK.findall(doc + "\n")
    assert any(mentions(b, op.name) for b in blocks), f"{op.__name__}: no ```mlir example"


@pytest.mark.parametrize(("name", "line"), docstring_examples())
def test_docstring_example_parses_and_verifies(name: str, line: str):
    assert mentions(line, name), f"the example does not use {name}: {line}"
    module = parse_module(as_function(line))
    assert [d.render() for d in verify_module(module)] == []
    ops = [op.name for op in module.walk()]
    assert ops.count(name) == 1


def test_as_function():
    line = "%s = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>"
    assert as_function(line) == (
        "func.func @example(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {\n"
        f"  {line}\n"
        "  func.return %s : tensor<4x8xf32>\n"
        "}\n"
    )
