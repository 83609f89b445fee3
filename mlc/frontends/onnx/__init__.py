"""
The ONNX frontend: `import_onnx(path_or_ModelProto)` -> a module in the `ml` dialect.

`model` reads and checks models, `graph` is the importer core, `node` the node a
converter sees, `ops/` holds one converter module per op family, their shared building
blocks and the op table. See `docs/frontends/onnx.md`.
onnx itself is imported on first use, so `import mlc` does not pay for it.
"""

import os
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp

if TYPE_CHECKING:
    import onnx


def import_onnx(src: "str | os.PathLike[str] | onnx.ModelProto") -> ModuleOp:
    """
    The model as a module with one `func.func @main` of `ml` ops.

    Raises `mlc.frontends.onnx.model.OnnxImportError`, an `mlc.CompileError` (one
    line, `m.onnx: node 'cut' (Slice, opset 17): error: ...`, its `node` the node at
    fault), for a model that cannot be read, is not valid, or uses ops or types the
    frontend does not support.
    """
    from mlc.frontends.onnx.graph import GraphImporter, supports
    from mlc.frontends.onnx.model import load

    return GraphImporter(load(src, supports)).run()


__all__ = ["import_onnx"]
