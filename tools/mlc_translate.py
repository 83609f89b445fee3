"""
mlc-translate: translate MLIR out of MLIR, as mlir-translate does.

    mlc-translate --mlir-to-llvmir model.mlir -o model.ll
    mlc-opt model.mlir -p convert-ml-to-linalg | mlc-translate --mlir-to-llvmir -
    mlc-translate --mlir-to-llvmir -O3 model.mlir
    mlc-translate --mlir-to-ptx model.mlir --sm sm_80

The input may be at any level of docs/design/lowering.md (`ml`, linalg on tensors or
memrefs, loops, `llvm`): it is lowered with the CPU pipeline of `mlc.pipeline` only as
far as it still needs (an `llvm`-dialect module is just translated), so the output is
the same as `mlc.compile` builds; an `.onnx` model is imported first, as `mlc-opt
model.onnx` does. By default the LLVM IR is the plain translation;
`-O3` prints it as the JIT runs it, optimised for the host CPU.

`--mlir-to-ptx` runs the `gpu` pipeline instead (from the `ml` level, or from any of
its later stages: linalg, buffers, parallel loops, kernels) and prints the PTX of the
kernels for `--sm` (default sm_90), chosen for that architecture (sm_70 and sm_75:
no `cp.async`, no tf32 tensor cores); no GPU or CUDA toolkit is needed, except CUDA's
libdevice for kernels that call math functions.

Errors follow mlc-opt's conventions: one-line diagnostics on stderr, exit status 1, no
traceback unless `--debug`, and `-o` is written only on success. A bad command line is
argparse's usage error (exit status 2).
"""

import argparse
import sys
from collections.abc import Sequence

from mlc.tools.mlc_opt import guarded, read_input, report, write_output
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from mlc import diagnostics, pipeline
from mlc.backend.jit import JITError, JITModule
from mlc.backend.llvm import LLVMTranslationError, to_llvm_ir
from mlc.backend.ptx import PTXError, to_ptx
from mlc.compiler.source import check_types
from mlc.diagnostics import DiagnosticError
from mlc.gpu_architectures import PTX_FEATURES
from mlc.ir import parse_module

PROG = "mlc-translate"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="translate MLIR (any level of the CPU lowering) to LLVM IR text",
    )
    translation = p.add_mutually_exclusive_group(required=True)
    translation.add_argument(
        "--mlir-to-llvmir",
        action="store_true",
        help="lower with the CPU pipeline as far as needed and print LLVM IR",
    )
    translation.add_argument(
        "--mlir-to-ptx",
        action="store_true",
        help="lower with the GPU pipeline as far as needed and print the kernels' PTX",
    )
    p.add_argument(
        "--sm",
        default="sm_90",
        choices=sorted(PTX_FEATURES),
        help="GPU architecture for --mlir-to-ptx (default: sm_90)",
    )
    p.add_argument(
        "input",
        nargs="?",
        default="-",
        help="input: MLIR text, or an .onnx model ('-' or none: stdin)",
    )
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument(
        "-O3",
        "--optimize",
        action="store_true",
        help="print the IR after LLVM's optimisation pipeline for the host CPU, as the JIT runs it",
    )
    p.add_argument("--debug", action="store_true", help="show Python tracebacks of internal errors")
    return p


def verified_module(text: str, name: str) -> ModuleOp:
    """The parsed, verified module of MLIR text; `DiagnosticError` if it is neither."""
    try:
        module = parse_module(text, name)
    except ParseError as error:
        raise DiagnosticError([diagnostics.from_parse_error(error)]) from None
    if errors := diagnostics.verify_module(module):
        raise DiagnosticError(errors)
    check_types(module)  # f80, complex, i128...: located, as mlc.compile reports them
    return module


def loaded_module(path: str) -> tuple[ModuleOp, dict[str, str]]:
    """The input's module (MLIR text, or an .onnx model imported) and its source text."""
    if path.endswith(".onnx"):
        from mlc.frontends.onnx import import_onnx  # onnx is imported only for models

        return import_onnx(path), {}
    text, name = read_input(path)
    return verified_module(text, name), {name: text}


def translate(module: ModuleOp, optimize: bool) -> str:
    """LLVM IR for a module; raises `DiagnosticError` for unlowerable input."""
    for spec in pipeline.remaining_pipelines(module):
        pipeline.run_pipeline(module, spec)
    try:
        ir = to_llvm_ir(module)
        return JITModule(ir).optimized_ir if optimize else ir
    except (LLVMTranslationError, JITError) as error:
        raise DiagnosticError([diagnostics.Diagnostic("error", str(error))]) from None


def translate_to_ptx(module: ModuleOp, sm: str) -> str:
    """PTX for a module; raises `DiagnosticError` for unlowerable input."""
    for spec in pipeline.remaining_gpu_pipelines(module, sm):
        pipeline.run_pipeline(module, spec)
    try:
        return to_ptx(module, sm)
    except (LLVMTranslationError, PTXError) as error:
        raise DiagnosticError([diagnostics.Diagnostic("error", str(error))]) from None


def run(args: argparse.Namespace) -> int:
    sources: dict[str, str] = {}
    try:
        module, sources = loaded_module(args.input)
        if args.mlir_to_ptx:
            output = translate_to_ptx(module, args.sm)
        else:
            output = translate(module, args.optimize)
    except DiagnosticError as error:
        report(error.diagnostics, sources)
        return 1
    write_output(output, args.output, failed=False)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return guarded(PROG, build_parser(), argv, run)


if __name__ == "__main__":
    sys.exit(main())
