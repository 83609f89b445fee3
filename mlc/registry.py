"""
mlc's dialects and passes by name: xDSL's, plus mlc's own, mlc's winning a shared name.

`mlc-opt` and the compile pipeline look names up here only. Factories are lazy, so
naming a dialect or pass does not import it until it is used.

A pass of one's own joins them without editing the package: a Python file (or an
importable module) that registers it with `register_pass`, named in `MLC_PLUGINS`
(several separated by `os.pathsep`), is imported the first time passes are looked up,
so `MLC_PLUGINS=my_passes.py mlc-opt -p my-pass` finds it. A plugin may not take a name
that mlc or xDSL already uses.
"""

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from mlc.pass_options import pass_from_options


def _ml_dialect() -> Dialect:
    from mlc.dialects.ml import ML

    return ML


def _linalg_dialect() -> Dialect:
    from mlc.dialects.linalg import linalg_dialect

    return linalg_dialect()


MLC_DIALECTS: dict[str, Callable[[], Dialect]] = {"ml": _ml_dialect, "linalg": _linalg_dialect}


def _matmul_chain_reorder() -> type[ModulePass]:
    from mlc.lowering.graph.matmul_chain_reorder import MatmulChainReorderPass

    return MatmulChainReorderPass


def _licm() -> type[ModulePass]:
    from mlc.lowering.graph.licm import LoopInvariantCodeMotionPass

    return LoopInvariantCodeMotionPass


def _bufferize() -> type[ModulePass]:
    from mlc.lowering.linalg.bufferize import BufferizePass

    return BufferizePass


def _convert_ml_to_linalg() -> type[ModulePass]:
    from mlc.lowering.convert_ml_to_linalg import ConvertMLToLinalgPass

    return ConvertMLToLinalgPass


def _shape_inference() -> type[ModulePass]:
    from mlc.lowering.graph.shape_inference import ShapeInferencePass

    return ShapeInferencePass


def _simplify_graph() -> type[ModulePass]:
    from mlc.lowering.graph.simplify_graph import SimplifyGraphPass

    return SimplifyGraphPass


def _fold_batch_norm() -> type[ModulePass]:
    from mlc.lowering.graph.fold_batch_norm import FoldBatchNormPass

    return FoldBatchNormPass


def _lower_affine() -> type[ModulePass]:
    from mlc.lowering.linalg.lower_affine import LowerAffinePass

    return LowerAffinePass


def _cse() -> type[ModulePass]:
    from mlc.lowering.graph.cse import CSEPass

    return CSEPass


def _canonicalize() -> type[ModulePass]:
    from mlc.lowering.graph.canonicalize import CanonicalizePass

    return CanonicalizePass


def _linalg_fuse_elementwise() -> type[ModulePass]:
    from mlc.lowering.linalg.linalg_fuse_elementwise import LinalgFuseElementwisePass

    return LinalgFuseElementwisePass


def _convert_to_llvm() -> type[ModulePass]:
    from mlc.lowering.convert_to_llvm import ConvertToLLVMPass

    return ConvertToLLVMPass


def _collapse_parallel_generics() -> type[ModulePass]:
    from mlc.lowering.cpu.collapse_parallel_generics import CollapseParallelGenericsPass

    return CollapseParallelGenericsPass


def _linalg_tile() -> type[ModulePass]:
    from mlc.lowering.cpu.linalg_tile import LinalgTilePass

    return LinalgTilePass


def _autotune_tiles() -> type[ModulePass]:
    from mlc.lowering.cpu.autotune_tiles import AutotuneTilesPass

    return AutotuneTilesPass


def _outline_kernels() -> type[ModulePass]:
    from mlc.lowering.cpu.outline_kernels import OutlineKernelsPass

    return OutlineKernelsPass


def _instrument_kernels() -> type[ModulePass]:
    from mlc.lowering.cpu.instrument_kernels import InstrumentKernelsPass

    return InstrumentKernelsPass


def _instrument_launches() -> type[ModulePass]:
    from mlc.lowering.gpu.instrument_launches import InstrumentLaunchesPass

    return InstrumentLaunchesPass


def _promote_accumulators() -> type[ModulePass]:
    from mlc.lowering.cpu.promote_accumulators import PromoteAccumulatorsPass

    return PromoteAccumulatorsPass


def _convert_linalg_to_parallel_loops() -> type[ModulePass]:
    from mlc.lowering.gpu.convert_linalg_to_parallel_loops import ConvertLinalgToParallelLoopsPass

    return ConvertLinalgToParallelLoopsPass


def _convert_contractions_to_gpu() -> type[ModulePass]:
    from mlc.lowering.gpu.convert_contractions_to_gpu import ConvertContractionsToGPUPass

    return ConvertContractionsToGPUPass


def _fuse_row_epilogues() -> type[ModulePass]:
    from mlc.lowering.gpu.fuse_row_epilogues import FuseRowEpiloguesPass

    return FuseRowEpiloguesPass


def _convert_parallel_loops_to_gpu() -> type[ModulePass]:
    from mlc.lowering.gpu.convert_parallel_loops_to_gpu import ConvertParallelLoopsToGPUPass

    return ConvertParallelLoopsToGPUPass


def _gpu_kernel_outlining() -> type[ModulePass]:
    from mlc.lowering.gpu.gpu_kernel_outlining import GPUKernelOutliningPass

    return GPUKernelOutliningPass


def _convert_gpu_to_nvvm() -> type[ModulePass]:
    from mlc.lowering.gpu.convert_gpu_to_nvvm import ConvertGPUToNVVMPass

    return ConvertGPUToNVVMPass


def _bound_device_sizes() -> type[ModulePass]:
    from mlc.lowering.gpu.bounded_sizes import BoundDeviceSizesPass

    return BoundDeviceSizesPass


def _defer_device_checks() -> type[ModulePass]:
    from mlc.lowering.gpu.defer_device_checks import DeferDeviceChecksPass

    return DeferDeviceChecksPass


def _outline_contractions() -> type[ModulePass]:
    from mlc.lowering.gpu.outline_contractions import OutlineContractionsPass

    return OutlineContractionsPass


def _merge_identical_kernels() -> type[ModulePass]:
    from mlc.lowering.gpu.merge_identical_kernels import MergeIdenticalKernelsPass

    return MergeIdenticalKernelsPass


def _convert_gpu_host_to_llvm() -> type[ModulePass]:
    from mlc.lowering.gpu.convert_gpu_host_to_llvm import ConvertGPUHostToLLVMPass

    return ConvertGPUHostToLLVMPass


def _convert_attention_to_gpu() -> type[ModulePass]:
    from mlc.lowering.gpu.convert_attention_to_gpu import ConvertAttentionToGPUPass

    return ConvertAttentionToGPUPass


def _decompose_attention() -> type[ModulePass]:
    from mlc.lowering.convert_ml_to_linalg.decompose_attention import DecomposeAttentionPass

    return DecomposeAttentionPass


def _fuse_attention() -> type[ModulePass]:
    from mlc.lowering.graph.fuse_attention import FuseAttentionPass

    return FuseAttentionPass


def _autodiff() -> type[ModulePass]:
    from mlc.autodiff.differentiate import AutodiffPass

    return AutodiffPass


def _autodiff_partition() -> type[ModulePass]:
    from mlc.autodiff.partition import AutodiffPartitionPass

    return AutodiffPartitionPass


def _autocast() -> type[ModulePass]:
    from mlc.lowering.graph.autocast import AutocastPass

    return AutocastPass


MLC_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "matmul-chain-reorder": _matmul_chain_reorder,
    "shape-inference": _shape_inference,
    "simplify-graph": _simplify_graph,
    "canonicalize": _canonicalize,
    "cse": _cse,
    "lower-affine": _lower_affine,
    "fold-batch-norm": _fold_batch_norm,
    "licm": _licm,
    "autocast": _autocast,
    "bufferize": _bufferize,
    "convert-to-llvm": _convert_to_llvm,
    "convert-ml-to-linalg": _convert_ml_to_linalg,
    "collapse-parallel-generics": _collapse_parallel_generics,
    "linalg-tile": _linalg_tile,
    "autotune-tiles": _autotune_tiles,
    "outline-kernels": _outline_kernels,
    "linalg-fuse-elementwise": _linalg_fuse_elementwise,
    "promote-accumulators": _promote_accumulators,
    "instrument-kernels": _instrument_kernels,
    "instrument-launches": _instrument_launches,
    "convert-linalg-to-parallel-loops": _convert_linalg_to_parallel_loops,
    "fuse-row-epilogues": _fuse_row_epilogues,
    "convert-parallel-loops-to-gpu": _convert_parallel_loops_to_gpu,
    "convert-contractions-to-gpu": _convert_contractions_to_gpu,
    "gpu-kernel-outlining": _gpu_kernel_outlining,
    "merge-identical-kernels": _merge_identical_kernels,
    "defer-device-checks": _defer_device_checks,
    "bound-device-sizes": _bound_device_sizes,
    "outline-contractions": _outline_contractions,
    "convert-gpu-to-nvvm": _convert_gpu_to_nvvm,
    "convert-gpu-host-to-llvm": _convert_gpu_host_to_llvm,
    "autodiff": _autodiff,
    "autodiff-partition": _autodiff_partition,
    "decompose-attention": _decompose_attention,
    "convert-attention-to-gpu": _convert_attention_to_gpu,
    "fuse-attention": _fuse_attention,
}


@cache
def _multiverse() -> Universe:
    """xDSL's dialects and passes: found once (scanning entry points takes ~20 ms)."""
    return Universe.get_multiverse()


def dialect_factories() -> dict[str, Callable[[], Dialect]]:
    return {**_multiverse().all_dialects, **MLC_DIALECTS}


def pass_factories() -> dict[str, Callable[[], type[ModulePass]]]:
    _load_plugins(os.environ.get("MLC_PLUGINS", ""))
    return {**_multiverse().all_passes, **MLC_PASSES, **PLUGIN_PASSES}


# ---------------------------------------------------------------------------
# Passes from outside the package
# ---------------------------------------------------------------------------

PLUGIN_PASSES: dict[str, Callable[[], type[ModulePass]]] = {}
P = TypeVar("P", bound=type[ModulePass])


def register_pass(pass_class: P) -> P:
    """
    Make `pass_class` known by its `name` to `mlc-opt -p` and `parse_pipeline`; returns
    it, so that it can decorate the class. Registering the same class again does
    nothing; another pass under a name already taken is a `ValueError`.
    """
    name = pass_class.name
    known = PLUGIN_PASSES.get(name)
    if known is not None and known() is pass_class:
        return pass_class
    if known is not None or name in MLC_PASSES or name in _multiverse().all_passes:
        raise ValueError(f"cannot register pass '{name}': the name is taken")
    PLUGIN_PASSES[name] = lambda: pass_class
    return pass_class


_LOADED_PLUGINS: set[str] = set()


def _load_plugins(spec: str) -> None:
    """Import each plugin of `spec` (paths or module names, `os.pathsep`-separated) once."""
    for entry in filter(None, spec.split(os.pathsep)):
        if entry in _LOADED_PLUGINS:
            continue
        try:
            _import_plugin(entry)
        except Exception as error:  # the user's code: any error, in one line
            detail = f"{type(error).__name__}: {error}".splitlines()[0]
            raise PipelineError(f"cannot load pass plugin '{entry}': {detail}") from None
        _LOADED_PLUGINS.add(entry)


def _import_plugin(entry: str) -> None:
    if not entry.endswith(".py"):
        importlib.import_module(entry)
        return
    path = Path(entry).resolve()
    name = f"mlc_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python file: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def make_context(allow_unregistered_dialect: bool = False) -> Context:
    """A context that knows every dialect mlc can parse."""
    ctx = Context(allow_unregistered=allow_unregistered_dialect)
    for name, factory in dialect_factories().items():
        ctx.register_dialect(name, _builtin_of_this_context if name == "builtin" else factory)
    return ctx


def _builtin_of_this_context() -> Dialect:
    """
    The builtin dialect with a resource-blob store of its own.

    xDSL's builtin dialect keeps the blobs of parsed `dense_resource`s in one store per
    process, and renames a handle it has seen before (`w` becomes `w_0` when the same
    text is parsed twice): each parse gets a fresh store instead.
    """
    from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
    from xdsl.dialects.builtin import Builtin

    return Dialect(
        Builtin.name, list(Builtin.operations), list(Builtin.attributes), [OpAsmDialectInterface()]
    )


class PipelineError(ValueError):
    """A pass pipeline that names an unknown pass or gives a pass a bad option."""


def parse_pipeline(spec: str) -> tuple[ModulePass, ...]:
    """
    Build the passes of a textual pipeline such as `cse,linalg-tile{tile-sizes=8,8}`.

    Raises `PipelineError` with a one-line message naming the offending pass.
    """
    from difflib import get_close_matches

    from xdsl.utils.arg_spec import parse_pipeline as parse_specs
    from xdsl.utils.exceptions import ArgSpecParseError

    available = pass_factories()
    try:
        specs = list(parse_specs(spec))
    except ArgSpecParseError as error:
        detail = str(error).splitlines()[-1].strip()
        raise PipelineError(f"invalid pass pipeline '{spec}': {detail}") from None
    passes: list[ModulePass] = []
    for pass_spec in specs:
        if pass_spec.name not in available:
            close = get_close_matches(pass_spec.name, available, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PipelineError(f"unknown pass '{pass_spec.name}'{hint}")
        try:
            passes.append(pass_from_options(available[pass_spec.name](), pass_spec.parameters))
        except (ValueError, TypeError) as error:
            raise PipelineError(f"pass '{pass_spec.name}': {error}") from None
    return tuple(passes)
