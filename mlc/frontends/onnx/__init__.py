"""
The ONNX frontend: `import_onnx(path_or_ModelProto)` -> a module in the `ml` dialect.

`model` reads and checks models, `graph` is the importer core, `node` the node a
converter sees, `ops/` holds one converter module per op family, their shared building
blocks and the op table. See `docs/frontends/onnx.md`.
onnx itself is imported on first use, so `import mlc` does not pay for it.
"""

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

if TYPE_CHECKING:
    import numpy as np
    import onnx


def import_onnx(
    src: "str | os.PathLike[str] | onnx.ModelProto",
    params_as_args: "bool | Callable[[str, np.ndarray], bool]" = False,
) -> ModuleOp:
    """
    The model as a module with one `func.func @main` of `ml` ops.

    With `params_as_args=True`, the model's floating-point initializers (its weights)
    become the function's leading arguments, in the order the model lists them, before
    the graph inputs, instead of constants, so a training step can differentiate and
    update them (fine-tuning); a callable `(name, array) -> bool` picks which.
    `onnx_params(src, params_as_args)` gives their names and values in that order. An
    op that needs a picked initializer's value when importing (a Resize's scales) then
    fails at that node: leave it out with the callable.

    Raises `mlc.frontends.onnx.model.OnnxImportError`, an `mlc.CompileError` (one
    line, `m.onnx: node 'cut' (Slice, opset 17): error: ...`, its `node` the node at
    fault), for a model that cannot be read, is not valid, or uses ops or types the
    frontend does not support.
    """
    from mlc.frontends.onnx.graph import GraphImporter, supports
    from mlc.frontends.onnx.model import load

    return GraphImporter(load(src, supports), _pick(params_as_args)).run()


def onnx_params(
    src: "str | os.PathLike[str] | onnx.ModelProto",
    params_as_args: "bool | Callable[[str, np.ndarray], bool]" = True,
) -> "dict[str, np.ndarray]":
    """The initializers `import_onnx(src, params_as_args)` makes arguments: name -> value,
    in argument order."""
    from mlc.frontends.onnx.graph import parameters, supports
    from mlc.frontends.onnx.model import load

    pick = _pick(params_as_args)
    return {} if pick is None else parameters(load(src, supports).proto.graph, pick)


def _pick(params_as_args: Any) -> "Callable[[str, np.ndarray], bool] | None":
    if params_as_args is True:
        return lambda name, array: True
    if params_as_args is False or params_as_args is None:
        return None
    if callable(params_as_args):
        return params_as_args
    raise TypeError(f"params_as_args must be a bool or a callable, got {params_as_args!r}")


__all__ = ["import_onnx", "onnx_params"]
