"""Pass options from a pipeline's text: values checked by type, errors in the pipeline's words."""

from dataclasses import dataclass
from typing import Literal

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlc.pass_options import kind_of, option_name, option_value, pass_from_options
from mlc.registry import PipelineError, parse_pipeline


@dataclass(frozen=True)
class OptionsPass(ModulePass):
    name = "test-options"

    sizes: tuple[int, ...] = ()
    scale: float = 1.0
    flag: bool = False
    label: str = "x"
    limit: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@dataclass(frozen=True)
class RequiredPass(ModulePass):
    name = "test-required"

    block_size: int

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def test_values_of_each_kind():
    built = pass_from_options(
        OptionsPass,
        {"sizes": (1, 2), "scale": (2,), "flag": (True,), "label": ("y",), "limit": (3,)},
    )
    assert built == OptionsPass(sizes=(1, 2), scale=2.0, flag=True, label="y", limit=3)
    assert isinstance(built.scale, float)


def test_defaults_and_valueless_options():
    assert pass_from_options(OptionsPass, {}) == OptionsPass()
    # A bool given without a value is true; an optional one without a value is None.
    assert pass_from_options(OptionsPass, {"flag": (), "limit": ()}) == OptionsPass(flag=True)
    assert pass_from_options(OptionsPass, {"sizes": ()}) == OptionsPass(sizes=())


def test_hyphens_and_underscores_reach_the_same_field():
    assert pass_from_options(RequiredPass, {"block-size": (8,)}).block_size == 8
    assert pass_from_options(RequiredPass, {"block_size": (8,)}).block_size == 8


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"sizes": ("a",)}, "option 'sizes' takes a list of integers, got 'a'"),
        ({"scale": (True,)}, "option 'scale' takes a number, got 'true'"),
        ({"flag": (1,)}, "option 'flag' takes a bool (true or false), got '1'"),
        ({"limit": (1.5,)}, "option 'limit' takes an integer, got '1.5'"),
        ({"limit": (1, 2)}, "option 'limit' takes an integer, got '1,2'"),
        ({"label": ()}, "option 'label' takes a string, got no value"),
        ({"size": (1,)}, "unknown option 'size' (did you mean 'sizes'?)"),
        ({"zzz": (1,)}, "unknown option 'zzz' (options: sizes, scale, flag, label, limit)"),
    ],
)
def test_errors_name_the_option_as_typed(given, message):
    with pytest.raises(ValueError) as error:
        pass_from_options(OptionsPass, given)
    assert str(error.value) == message


def test_a_required_option_is_named_with_hyphens():
    with pytest.raises(ValueError, match=r"^option 'block-size' is required$"):
        pass_from_options(RequiredPass, {})
    with pytest.raises(ValueError, match=r"^unknown option 'block_sise' \(did you mean"):
        pass_from_options(RequiredPass, {"block_sise": (8,)})


def test_an_int_is_no_bool():
    with pytest.raises(ValueError, match="takes an integer, got 'true'"):
        option_value("n", (True,), int)
    assert option_value("n", (3,), int | None) == 3


def test_literal_choices():
    hint = Literal["fast", "none"] | tuple[str, ...]
    assert option_value("flags", ("fast",), hint) == "fast"
    assert option_value("flags", ("nnan", "ninf"), hint) == ("nnan", "ninf")
    with pytest.raises(ValueError, match=r"takes one of 'on', 'off', got 'maybe'$"):
        option_value("mode", ("maybe",), Literal["on", "off"])


def test_words():
    assert option_name("tile_sizes") == "tile-sizes"
    assert kind_of(tuple[int, ...]) == "a list of integers"
    assert kind_of(tuple[int, ...] | tuple[float, ...]) == "a list of integers or a list of numbers"


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("linalg-tile{tile-sizes=0,0,0,0}", "tile-sizes must be positive, got 0,0,0,0"),
        ("linalg-tile{tile-sizes=-1,8,4,4}", "tile-sizes must be positive, got -1,8,4,4"),
        ("linalg-tile{tile_sizes=64,64}", "tile-sizes takes 4 values (MR,NR,KC,MC), got 2"),
        ("linalg-tile{vector-length=-2}", "vector-length must be 0 (the host's) or positive"),
        ("licm{max-live-bytes=-1}", "max-live-bytes must be 0 or more, got -1"),
        ("convert-contractions-to-gpu{tile=64,64,0,4,8}", "tile sizes must be positive"),
        ("convert-parallel-loops-to-gpu{block-size=0}", "block-size must be a multiple of 32"),
        ("convert-linalg-to-parallel-loops{register-tile=0,4}", "register-tile takes two sizes"),
        ("scf-parallel-loop-tiling", "option 'parallel-loop-tile-sizes' is required"),
    ],
)
def test_invalid_values_of_mlc_passes_are_refused_by_name(pipeline, message):
    with pytest.raises(PipelineError) as error:
        parse_pipeline(pipeline)
    assert str(error.value).startswith(f"pass '{pipeline.split('{')[0]}': ")
    assert message in str(error.value)
    assert "_" not in str(error.value).split(": ", 1)[1].replace("tile_sizes", "")


def test_valid_options_of_mlc_passes():
    (tile,) = parse_pipeline("linalg-tile{tile-sizes=2,8,4,4 vector-length=4 row-blocks}")
    assert tile.tiles() is not None and tile.tiles().nr == 8  # type: ignore[attr-defined]
    (lower,) = parse_pipeline("convert-ml-to-linalg{online-softmax}")
    assert lower.online_softmax is True  # type: ignore[attr-defined]
