"""mlc's `lower-affine` gives the IR xDSL's pass gives, on the lit test's functions and
on the loop nests `convert-linalg-to-loops` makes of a small convolution."""

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.transforms.lower_affine import LowerAffinePass as XDSLLowerAffine

from mlc import pipeline
from mlc.lowering.linalg.lower_affine import LowerAffinePass
from mlc.registry import make_context

LIT = Path(__file__).parents[3] / "filecheck" / "lowering" / "linalg" / "lower-affine.mlir"

CONV = """
func.func @conv(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>)
    -> tensor<1x4x9x9xf32> {
  %y = ml.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  func.return %y : tensor<1x4x9x9xf32>
}
"""


def _sources() -> list[str]:
    return [part for part in LIT.read_text().split("// -----") if "func.func" in part]


def _both(text: str, before: str | None = None) -> tuple[str, str]:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    if before is not None:
        pipeline.run_pipeline(module, before)
        assert "affine." in str(module)
    ours, theirs = module.clone(), module.clone()
    LowerAffinePass().apply(ctx, ours)
    XDSLLowerAffine().apply(ctx, theirs)
    return str(ours), str(theirs)


@pytest.mark.parametrize("index", range(3))
def test_lit_functions_as_xdsl(index: int) -> None:
    ours, theirs = _both(_sources()[index])
    assert ours == theirs
    assert "affine." not in ours


def test_convolution_loops_as_xdsl() -> None:
    loops = "convert-ml-to-linalg,bufferize,convert-linalg-to-loops"
    ours, theirs = _both(CONV, loops)
    assert ours == theirs
    assert "affine." not in ours
