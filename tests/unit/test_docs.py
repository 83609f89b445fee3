"""
Keep the docs honest: the `ml` dialect reference, the op docstrings, the developer guide
(docs/CONTRIBUTING.md) and the paths every doc names.

The reference (docs/dialects/ml.md) has one `### ml.<name>` entry per op of the `ML`
dialect and none for ops that do not exist; every ```mlir block in it is a complete
module that parses, verifies and round-trips. Every op's docstring holds a ```mlir
example of the op (STYLE.md R6), which must parse and verify once its free values are
declared as function arguments. The guide's table of pipeline stages is the pipeline's,
and its example pass passes its example lit test. A repository path that README.md or a
doc names exists, as does every relative link. (That the shell and Python blocks of every
page run is `test_doc_snippets.py`'s.)
"""

import inspect
import re
import shlex
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet
from mlc.tools import mlc_opt
from xdsl.ir import Operation

from mlc import pipeline, registry
from mlc.diagnostics import verify_module
from mlc.dialects.ml import ML
from mlc.ir import parse_module, print_module

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "dialects" / "ml.md"
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
    (`(t0, t1) -> r`), and the function returns the op's result (or results,
    `-> (r0, r1)`).
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
        f"  func.return {result} : {output.removeprefix('(').removesuffix(')')}\n"
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


# ---------------------------------------------------------------------------
# The developer guide (docs/CONTRIBUTING.md)
# ---------------------------------------------------------------------------

GUIDE = ROOT / "docs" / "CONTRIBUTING.md"
FENCED = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
EXAMPLE_PASS = "expand-squares"


def guide_blocks(language: str) -> list[str]:
    return [m.group(2) for m in FENCED.finditer(GUIDE.read_text()) if m.group(1) == language]


def load_block(source: str, name: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """Run a ```python block as the module `name` (registered while the test runs)."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(source, f"{GUIDE}:{name}", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("target", ["cpu", "gpu"])
def test_guide_lists_every_stage_as_the_pipeline_has_it(target: str):
    text = GUIDE.read_text()
    for stage in pipeline.stages_for(target):
        assert f"`{stage}`" in text, f"stage {stage} of {target} is not in the guide"
        assert f"`{pipeline.stage_text(stage, target=target)}`" in text, (
            f"the guide's passes of stage {stage} ({target}) are not the pipeline's"
        )


def run_line_commands(test: str) -> list[str]:
    """The commands of a lit test's RUN lines, continuation lines joined."""
    commands: list[str] = []
    pending = ""
    for line in test.splitlines():
        if (match := re.match(r"//\s*RUN:\s?(.*)$", line)) is None:
            continue
        pending += match.group(1)
        if pending.endswith("\\"):
            pending = pending[:-1]
        else:
            commands.append(pending)
            pending = ""
    return commands


def filecheck_executable() -> str:
    found = shutil.which("filecheck", path=str(Path(sys.executable).parent))
    return found or shutil.which("filecheck") or pytest.skip("filecheck is not installed")


def test_example_pass_passes_its_lit_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """The guide's example pass, registered for the test, passes the guide's lit test."""
    (source,) = [b for b in guide_blocks("python") if f'name = "{EXAMPLE_PASS}"' in b]
    (test,) = [b for b in guide_blocks("mlir") if "// RUN:" in b]
    module = load_block(source, "guide_example_pass", monkeypatch)
    monkeypatch.setitem(registry.MLC_PASSES, EXAMPLE_PASS, lambda: module.ExpandSquaresPass)
    path = tmp_path / f"{EXAMPLE_PASS}.mlir"
    path.write_text(test)
    commands = run_line_commands(test)
    assert len(commands) == 3
    for command in commands:
        opt, _, check = command.replace("%s", str(path)).partition("|")
        tool, *arguments = shlex.split(opt)
        assert tool == "mlc-opt", command
        capsys.readouterr()
        status = mlc_opt.main(arguments)
        output = capsys.readouterr()
        assert status == 0, f"{command}\n{output.err}"
        if check:
            checker, *options = shlex.split(check)
            assert checker == "filecheck", command
            result = subprocess.run(
                [filecheck_executable(), *options],
                input=output.out,
                capture_output=True,
                text=True,
                check=False,
            )
            assert result.returncode == 0, f"{command}\n{result.stderr}"


# ---------------------------------------------------------------------------
# Paths and links in README.md and docs/
# ---------------------------------------------------------------------------

MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REPO_PATH = re.compile(r"(?<![\w./-])((?:mlc|tests|docs|bench|tools|examples)/[\w./*-]*[\w*])")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# The guide's example pass, which the repository does not hold.
EXAMPLE_PATHS = {
    "mlc/lowering/graph/expand_squares.py",
    "tests/filecheck/lowering/graph/expand-squares.mlir",
}


def path_exists(path: str, prefix_only: bool) -> bool:
    """Whether `path` names a file or folder (a module may be named without `.py`)."""
    pattern = f"{path}*" if prefix_only else path
    return any(ROOT.glob(pattern)) or (ROOT / f"{path}.py").is_file()


def missing_paths(text: str) -> list[str]:
    """The repository paths `text` names that do not exist; a path a `<placeholder>` or
    `{alternatives}` continues is checked as a prefix."""
    missing: list[str] = []
    for match in REPO_PATH.finditer(text):
        path = match.group(1)
        continues = re.match(r"[-_.]?[<{]", text[match.end() : match.end() + 2]) is not None
        if path not in EXAMPLE_PATHS and not path_exists(path, continues):
            line = text.count("\n", 0, match.start()) + 1
            missing.append(f"line {line}: {path}")
    return missing


def test_missing_paths_are_found():
    text = "`mlc/pipeline.py`, `mlc/shapes`, `bench/*.py`, `tests/filecheck/lowering/<level>/`,"
    text += " `tests/filecheck/lowering/graph/licm-<what>.mlir`"
    assert missing_paths(text) == []
    assert missing_paths("see `mlc/lowering/nowhere.py`\n`tests/filecheck/no-such{,-x}.mlir`") == [
        "line 1: mlc/lowering/nowhere.py",
        "line 2: tests/filecheck/no-such",
    ]


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_paths_exist(doc: Path):
    assert missing_paths(doc.read_text()) == []


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path):
    links = [m.group(1) for m in LINK.finditer(doc.read_text())]
    broken = [link for link in links if "://" not in link and not (doc.parent / link).exists()]
    assert broken == []
