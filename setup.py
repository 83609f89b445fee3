"""
Package discovery: every package under mlc/, found, plus `mlc.tools` from the top-level
tools/ folder, which discovery cannot rename (pyproject.toml maps its folder).
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["mlc", "mlc.*"]), "mlc.tools"])
