"""Passes from outside the package: `register_pass` and the plugins `MLC_PLUGINS` names."""

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlc import registry
from mlc.registry import PipelineError, parse_pipeline, pass_factories, register_pass

PLUGIN = """
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass

from mlc.registry import register_pass


@register_pass
@dataclass(frozen=True)
class TagModulePass(ModulePass):
    name = "test-tag-module"
    tag: str = "x"

    def apply(self, ctx, op):
        op.attributes["test.tag"] = StringAttr(self.tag)
"""


@dataclass(frozen=True)
class OwnPass(ModulePass):
    name = "test-own-pass"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@pytest.fixture(autouse=True)
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no plugin registered or loaded, and leaves none imported."""
    monkeypatch.setattr(registry, "PLUGIN_PASSES", {})
    monkeypatch.setattr(registry, "_LOADED_PLUGINS", set())
    monkeypatch.delenv("MLC_PLUGINS", raising=False)
    yield
    for name in ("mlc_plugin_my_plugin", "mlc_plugin_bad_plugin", "my_named_plugin"):
        sys.modules.pop(name, None)


def test_registered_pass_is_found_by_name():
    assert register_pass(OwnPass) is OwnPass
    assert pass_factories()["test-own-pass"]() is OwnPass
    (built,) = parse_pipeline("test-own-pass")
    assert isinstance(built, OwnPass)


def test_registering_the_same_class_again_does_nothing():
    register_pass(OwnPass)
    register_pass(OwnPass)
    assert list(registry.PLUGIN_PASSES) == ["test-own-pass"]


@pytest.mark.parametrize("taken", ["test-own-pass", "licm", "cse"])
def test_a_taken_name_is_refused(taken: str):
    register_pass(OwnPass)

    @dataclass(frozen=True)
    class Other(ModulePass):
        name = taken

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            pass

    with pytest.raises(ValueError, match=f"cannot register pass '{taken}': the name is taken"):
        register_pass(Other)


def test_plugin_file_is_loaded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(PLUGIN)
    monkeypatch.setenv("MLC_PLUGINS", str(plugin))
    (built,) = parse_pipeline("test-tag-module{tag=hello}")
    module = ModuleOp([])
    built.apply(Context(), module)
    assert module.attributes["test.tag"].data == "hello"  # pyright: ignore[reportAttributeAccessIssue]
    assert "test-tag-module" in pass_factories()  # a second lookup imports nothing again


def test_plugin_module_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "my_named_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MLC_PLUGINS", "my_named_plugin")
    assert "test-tag-module" in pass_factories()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (None, "FileNotFoundError: "),
        ("def broken(:\n", "SyntaxError: "),
        ("raise RuntimeError('no GPU here')\n", "RuntimeError: no GPU here"),
    ],
)
def test_a_plugin_that_fails_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str | None, message: str
):
    plugin = tmp_path / "bad_plugin.py"
    if source is not None:
        plugin.write_text(source)
    monkeypatch.setenv("MLC_PLUGINS", str(plugin))
    with pytest.raises(PipelineError) as error:
        parse_pipeline("cse")
    text = str(error.value)
    assert text.startswith(f"cannot load pass plugin '{plugin}': {message}")
    assert "\n" not in text
    with pytest.raises(PipelineError):  # not marked as loaded: it fails again
        pass_factories()


def test_unknown_module_plugin(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_PLUGINS", "no_such_plugin_module")
    with pytest.raises(PipelineError, match="ModuleNotFoundError"):
        pass_factories()
