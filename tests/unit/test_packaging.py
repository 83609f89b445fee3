"""Every folder of the source tree is a package that setup.py's discovery finds."""

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).parents[2]


def test_every_source_folder_is_a_package():
    """find_packages skips a folder without `__init__.py`: its modules would not install."""
    folders = {path.parent for path in (ROOT / "mlc").rglob("*.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert not missing, f"add an __init__.py to {missing}"


def test_discovery_finds_every_package():
    found = set(find_packages(str(ROOT), include=["mlc", "mlc.*"]))
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "mlc").rglob("__init__.py")
    }
    assert folders == found


def test_tools_are_installed_as_mlc_tools():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["mlc.tools"] == "tools"
    assert '"mlc.tools"' in (ROOT / "setup.py").read_text()


def test_metadata_takes_the_forms_setuptools_does_not_deprecate():
    """`project.license` as an SPDX string (a table warns at every install since setuptools
    77), with a build backend new enough to read it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert isinstance(config["project"]["license"], str)
    assert "setuptools>=77" in config["build-system"]["requires"]
    assert not any(c.startswith("License ::") for c in config["project"].get("classifiers", []))
