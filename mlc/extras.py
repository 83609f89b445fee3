"""
mlc's optional dependencies, each with the pip extra of `pyproject.toml` that installs it:
a feature that needs a missing one says so in one line that names the extra.

    pycuda = require("pycuda.driver", "target 'cuda'")
    # MissingDependencyError: target 'cuda' needs pycuda, which is not installed:
    #   pip install 'mlc[gpu]' (from a checkout: pip install -e '.[gpu]')
"""

import importlib
from types import ModuleType

EXTRAS = {
    "pycuda": "gpu",  # the cuda target
    "torch": "gpu",  # bench/gpu.py's reference column
    "onnxruntime": "dev",  # the tests and `make conformance` check against it
}
"""The extra that installs each optional package (tests/unit/test_extras.py checks them)."""


class MissingDependencyError(ImportError):
    """An optional package that a feature needs is not installed (a one-line message)."""


def install_hint(package: str) -> str:
    extra = EXTRAS[package]
    return f"pip install 'mlc[{extra}]' (from a checkout: pip install -e '.[{extra}]')"


def require(module: str, purpose: str) -> ModuleType:
    """
    `module`, imported; if its package is not installed, `MissingDependencyError` saying
    that `purpose` needs it and how to install it. Any other import failure (a broken
    installation, a missing dependency of the package itself) is left as it is.
    """
    package = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if not (error.name == module or module.startswith(f"{error.name}.")):
            raise  # some other module is missing: not the optional package asked for
        raise MissingDependencyError(
            f"{purpose} needs {package}, which is not installed: {install_hint(package)}"
        ) from None
