"""Every package of the source tree is installed: an editable install hides a miss."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_every_package_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "mlc").rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject.toml: {sorted(found - listed)}"
    assert "mlc.tools" in listed and config["package-dir"]["mlc.tools"] == "tools"
