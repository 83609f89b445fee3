"""
Every shell command and Python block of README.md and docs/ runs as written.

The runnable blocks of a page (```sh, ```console, ```python) run in order, in one fresh
folder and one Python namespace per page; one test per page. The folder holds a copy of
`examples/` and `.venv`, a link to the environment running the tests, so that
`.venv/bin/mlc-opt` is that environment's tool. Shell blocks run under `bash -e -o
pipefail` with that environment's bin folder first on PATH and PYTHONPATH naming the tree
under test, as `tests/filecheck/lit.cfg` runs lit's: `mlc-opt` and `.venv/bin/mlc-opt`
both run this tree's mlc. A ```console block's commands are its `$ ` lines.

What the page says in the HTML comment on the line just before a fence:
- `<!-- skip: <reason> -->`: the block is not run (it needs a GPU or torch, or runs
  minutes); `test_skipped_block` shows the reason. Keep these rare.
- `<!-- output -->` before a ```text block: the output (stdout, then stderr) of the block
  run last holds each of its non-blank lines, in order, as part of a line (spaces
  collapsed); a line `...` stands for lines left out. The output lines of a ```console
  block are checked the same way.

A fence may name a file in its info string (```python file=my_passes.py): the block is
then written to that file of the folder, not run, for the blocks after it to use.
Blocks showing IR or output (```mlir, ```text, ```diff) are otherwise not run.
"""

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet

ROOT = Path(__file__).resolve().parents[2]
GENERATED = {ROOT / "docs" / "onnx-support.md"}  # written by `make conformance`
PAGES = [ROOT / "README.md", *sorted(set((ROOT / "docs").rglob("*.md")) - GENERATED)]

FENCE = re.compile(r"^```([\w-]*)([^\n]*)\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
MARK = re.compile(r"<!--\s*(skip|output)\s*(?::\s*(.*?))?\s*-->\s*\Z")
RUNNABLE = {"sh", "console", "python"}


@dataclass(frozen=True)
class Block:
    """One fenced block of a page and what the page says about it."""

    language: str
    text: str
    line: int  # the block's first line, after the fence
    file: str | None = None  # written to this file instead of run
    skip: str | None = None  # the reason it is not run
    output: bool = False  # a ```text block the previous run's output must match


def blocks(text: str) -> list[Block]:
    found: list[Block] = []
    for match in FENCE.finditer(text):
        language, info, body = match.groups()
        before = text[: match.start()]
        preceding_line = before.rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(preceding_line)
        file = re.search(r"\bfile=(\S+)", info)
        found.append(
            Block(
                language=language,
                text=body,
                line=before.count("\n") + 2,
                file=file.group(1) if file else None,
                skip=(mark.group(2) or "no reason given")
                if mark and mark.group(1) == "skip"
                else None,
                output=bool(mark and mark.group(1) == "output"),
            )
        )
    return found


def console_commands(text: str) -> tuple[str, list[str]]:
    """A ```console block's commands (as one script) and the output lines it shows."""
    commands: list[str] = []
    shown: list[str] = []
    continued = False
    for line in text.splitlines():
        if continued or line.startswith("$ "):
            commands.append(line if continued else line[2:])
            continued = line.endswith("\\")
        else:
            shown.append(line)
    return "\n".join(commands) + "\n", shown


def missing_output(expected: list[str], output: str) -> str | None:
    """The first expected line not found (in order, as part of a line) in `output`; a
    line `...` stands for lines left out."""
    lines = iter(" ".join(line.split()) for line in output.splitlines())
    for want in (" ".join(line.split()) for line in expected):
        if want not in ("", "...") and not any(want in line for line in lines):
            return want
    return None


def runs(page: Path) -> bool:
    return any(b.language in RUNNABLE or b.file for b in blocks(page.read_text()))


def tool_environment() -> dict[str, str]:
    """The environment of a shell block: this tree's mlc, this environment's tools."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def prepare(folder: Path) -> None:
    shutil.copytree(ROOT / "examples", folder / "examples")
    (folder / ".venv").symlink_to(Path(sys.executable).parent.parent, target_is_directory=True)


def run_shell(script: str, folder: Path, where: str) -> str:
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=folder,
        env=tool_environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{where}: exit status {result.returncode}\n{output[-3000:]}"
    return output


def run_python(source: str, module: types.ModuleType, where: str) -> str:
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        exec(compile(source, where, "exec"), module.__dict__)
    return captured.getvalue()


def run_page(page: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the page's blocks in order in `folder`, checking the outputs it shows."""
    prepare(folder)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))  # a page's Python may import the files it writes
    name = "doc_" + re.sub(r"\W", "_", str(page.relative_to(ROOT)))
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up
    output = ""
    for block in blocks(page.read_text()):
        where = f"{page.relative_to(ROOT)}:{block.line}"
        if block.skip:
            continue
        if block.file:
            (folder / block.file).parent.mkdir(parents=True, exist_ok=True)
            (folder / block.file).write_text(block.text)
        elif block.output:
            missing = missing_output(block.text.splitlines(), output)
            assert missing is None, f"{where}: not in the output: {missing!r}\n{output[-3000:]}"
        elif block.language == "sh":
            output = run_shell(block.text, folder, where)
        elif block.language == "console":
            script, shown = console_commands(block.text)
            output = run_shell(script, folder, where)
            missing = missing_output(shown, output)
            assert missing is None, f"{where}: not in the output: {missing!r}\n{output[-3000:]}"
        elif block.language == "python":
            output = run_python(block.text, module, where)


@pytest.mark.parametrize(
    "page", [p for p in PAGES if runs(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_page_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_page(page, tmp_path, monkeypatch)


def skipped_blocks() -> list[ParameterSet]:
    return [
        pytest.param(b.skip, id=f"{p.relative_to(ROOT)}:{b.line}")
        for p in PAGES
        for b in blocks(p.read_text())
        if b.skip
    ]


@pytest.mark.parametrize("reason", skipped_blocks())
def test_skipped_block(reason: str):
    pytest.skip(reason)


# ---------------------------------------------------------------------------
# The reader of pages
# ---------------------------------------------------------------------------

PAGE = """\
Text.

<!-- skip: needs a GPU -->
```python
gpu()
```

```sh file=run.sh
echo hi
```

<!-- output -->
```text
hi
```

```mlir
func.func @f() { func.return }
```
"""


def test_blocks_and_their_marks():
    assert blocks(PAGE) == [
        Block("python", "gpu()\n", 5, skip="needs a GPU"),
        Block("sh", "echo hi\n", 9, file="run.sh"),
        Block("text", "hi\n", 14, output=True),
        Block("mlir", "func.func @f() { func.return }\n", 18),
    ]


def test_console_commands():
    script, shown = console_commands("$ echo a \\\n  b\na b\n$ true\n")
    assert script == "echo a \\\n  b\ntrue\n"
    assert shown == ["a b"]


def test_missing_output():
    output = "first  line\nsecond line\nthird\n"
    assert missing_output(["first line", "", "...", "third"], output) is None
    assert missing_output(["second", "first"], output) == "first"  # in order
    assert missing_output(["fourth"], output) == "fourth"


def test_a_failing_block_fails_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    page = tmp_path / "page.md"
    page.write_text("```sh\ntrue\nfalse\necho after\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "examples").mkdir()
    with pytest.raises(AssertionError, match=r"page\.md:2: exit status 1"):
        run_page(page, tmp_path / "run", monkeypatch)


def test_shown_output_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    page = tmp_path / "page.md"
    page.write_text("```python\nprint('yes')\n```\n<!-- output -->\n```text\nno\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "examples").mkdir()
    with pytest.raises(AssertionError, match=r"page\.md:6: not in the output: 'no'"):
        run_page(page, tmp_path / "run", monkeypatch)
