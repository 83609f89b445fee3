"""
The package's layout rules, checked on its import graph (module-level and function-local
imports alike): what docs/CONTRIBUTING.md promises a reader about where things may reach.
"""

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "mlc"
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str | None]]:
    """(module, imported name) for each name an import statement binds."""
    if isinstance(node, ast.Import):
        yield from ((alias.name, None) for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = name if modules()[name].name == "__init__.py" else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if node.module else package
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield (submodule, None) if submodule in modules() else (base, alias.name)


@cache
def imports() -> dict[str, set[tuple[str, str | None]]]:
    """Each mlc module -> the mlc modules it imports, with the name taken from each."""
    graph: dict[str, set[tuple[str, str | None]]] = {}
    for name, path in modules().items():
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target, symbol in imported(name, node):
                    while target not in modules() and "." in target:
                        target = target.rpartition(".")[0]
                    if target in modules() and target != name:
                        edges.add((target, symbol))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            if component:
                found.append(sorted([node, *component]))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    graph = {name: {target for target, _ in edges} for name, edges in imports().items()}
    assert not cycles(graph), f"import cycles: {cycles(graph)}"


def test_no_private_name_is_imported_from_another_module():
    bad = [
        f"{name} takes {symbol} from {target}"
        for name, edges in imports().items()
        for target, symbol in edges
        if symbol and symbol.startswith("_") and not symbol.startswith("__")
    ]
    assert not bad, "\n".join(bad)


def test_nothing_inside_the_package_imports_its_init():
    bad = [name for name, edges in imports().items() if any(t == "mlc" for t, _ in edges)]
    assert not bad, f"these import mlc/__init__: {bad}"


@pytest.mark.parametrize(
    ("importer", "imported_prefix", "except_prefix"),
    [
        ("mlc.lowering", "mlc.frontends", None),
        ("mlc.frontends", "mlc.lowering", "mlc.lowering.support"),
        ("mlc.backend", "mlc.frontends", None),
        ("mlc.backend", "mlc.lowering", None),
        ("mlc.lowering", "mlc.backend", "mlc.backend.cuda_abi"),
        ("mlc.frontends", "mlc.compiler", None),
        ("mlc.lowering.cpu", "mlc.lowering.gpu", None),
        ("mlc.lowering.gpu", "mlc.lowering.cpu", None),
        ("mlc.lowering.support", "mlc.lowering", "mlc.lowering.support"),
        ("mlc.dialects", "mlc.lowering", "mlc.lowering.graph.patterns"),
    ],
)
def test_levels_reach_only_where_they_may(importer, imported_prefix, except_prefix):
    bad = [
        f"{name} -> {target}"
        for name, edges in imports().items()
        if name.startswith(importer)
        for target, _ in edges
        if target.startswith(imported_prefix)
        and not (except_prefix and target.startswith(except_prefix))
    ]
    assert not bad, "\n".join(bad)


def test_no_module_over_the_size_limit():
    sizes = {name: len(path.read_text().splitlines()) for name, path in modules().items()}
    bad = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not bad, f"split these modules (over {MAX_LINES} lines): {bad}"


def test_the_checks_see_the_imports_they_are_about():
    """Guards the checks above against a parser or a search that finds nothing."""
    assert ("mlc.registry", "parse_pipeline") in imports()["mlc.pipeline"]
    assert ("mlc.lowering.support.locations", "keep_location") in imports()[
        "mlc.lowering.convert_ml_to_linalg.elementwise"
    ]
    assert len(modules()) > 100
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
