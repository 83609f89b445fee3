"""
Translate the kernels of a module (its `gpu.module`s, lowered by `convert-gpu-to-nvvm`)
to PTX text with llvmlite's NVPTX target: no CUDA toolkit is needed to produce PTX.

Steps, all on the LLVM side:
1. the `llvm`-dialect kernels become LLVM IR for `nvptx64-nvidia-cuda` through
   `mlc.backend.llvm` (xDSL's translator plus mlc's extensions); functions marked
   `nvvm.kernel` get the `ptx_kernel` calling convention, which is how LLVM 20 and
   later mark entry points (`nvvm.annotations` metadata is no longer read);
2. math NVPTX cannot select (`llvm.exp.f32`, `llvm.tanh.f64`, libm's `erf`, ...) is
   redirected to libdevice (`__nv_expf`, ...), whose bitcode ships with the CUDA
   toolkit: it is linked in when a kernel needs it, found through `CUDA_HOME`,
   `CUDA_PATH` or /usr/local/cuda; f16 math goes through f32;
   kernels' launch bounds (`nvvm.maxntid`, `nvvm.minctasm` from convert-gpu-to-nvvm)
   become the LLVM function attributes of those names;
3. LLVM's O3 pipeline for the target (NVVMReflect resolves libdevice's `__nvvm_reflect`
   queries; unused libdevice functions are internalised and dropped), then PTX, by
   `mlc.backend.codegen_worker` (the same code as the host's split code generation):
   a program with many kernels in parts, on every core, joined into one PTX module
   (`mlc.backend.ptx_parts`); each part's PTX is kept in the disk cache.

The architectures mlc targets, with the PTX ISA version each asks for, are in
`mlc.gpu_architectures`. The kernel-choosing passes take an
architecture as its compute capability (`convert-contractions-to-gpu{sm=75}`), so
that sm_70 and sm_75 get kernels without `cp.async` and tf32 `mma` (sm_80 and
later); `to_ptx` still refuses such kernels for them, as a safety net.
"""

import os
import re
from functools import cache
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as llvm_ir
from xdsl.dialects import gpu
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Operation

from mlc import collector, timing
from mlc.backend import cache as kernel_cache
from mlc.backend import ptx_parts
from mlc.backend.compiled import CompiledObject
from mlc.backend.llvm import ops_to_llvmlite
from mlc.backend.split_codegen import code_key, run_jobs
from mlc.gpu_architectures import ASYNC_COPY_SM, PTX_FEATURES, compute_capability

TRIPLE = "nvptx64-nvidia-cuda"
KERNEL_ATTR = "nvvm.kernel"  # as convert-gpu-to-nvvm marks kernels
# Launch bounds convert-gpu-to-nvvm puts on kernels; LLVM (20 and later) reads them as
# function attributes of these names, for PTX's `.maxntid` and `.minnctapersm`.
_LAUNCH_BOUNDS = ("nvvm.maxntid", "nvvm.minctasm")

# What older architectures lack, as it shows in the kernels' LLVM IR (NVPTX would abort
# on the intrinsics): what it is called in an error, and how to find it.
_SM80_FEATURES = (
    ("multiply in tf32", re.compile(r'@"?llvm\.nvvm\.(?:mma\.\S*tf32|f2tf32)')),
    ("copy through cp.async", re.compile(r"cp\.async")),
    ("multiply 16-bit values by mma.sync.m16n8k16", re.compile(r"mma\.sync\.aligned\.m16n8k16")),
)

# Math NVPTX has no instruction for: LLVM intrinsic name -> libdevice stem.
_LIBDEVICE_INTRINSICS = (
    "exp|exp2|exp10|log|log2|log10|sin|cos|tan|tanh|asin|acos|atan|sinh|cosh|pow|atan2"
)
_INTRINSIC = re.compile(rf'@"?llvm\.({_LIBDEVICE_INTRINSICS})\.(f16|f32|f64)"?(?=\()')


class PTXError(Exception):
    """The kernels cannot be turned into PTX (an unknown architecture, no libdevice, ...)."""


@cache
def _initialize() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def target_machine(sm: str) -> llvm.TargetMachine:
    """llvmlite's NVPTX target machine for architecture `sm` (e.g. `sm_90`), at O3."""
    if sm not in PTX_FEATURES:
        known = ", ".join(PTX_FEATURES)
        raise PTXError(f"unknown GPU architecture '{sm}' (known: {known})")
    _initialize()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=sm, features=PTX_FEATURES[sm], opt=3)


def libdevice_path() -> Path | None:
    """Where the CUDA toolkit's libdevice bitcode is, or None."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for root in roots:
        if root:
            candidate = Path(root) / "nvvm" / "libdevice" / "libdevice.10.bc"
            if candidate.is_file():
                return candidate
    return None


@cache
def _libdevice_bitcode() -> bytes:
    path = libdevice_path()
    if path is None:
        raise PTXError(
            "these kernels call math functions that need CUDA's libdevice "
            "(nvvm/libdevice/libdevice.10.bc), which was not found: set CUDA_HOME"
        )
    return path.read_bytes()


def kernel_ops(module: ModuleOp) -> list[Operation]:
    """The contents of `module`'s `gpu.module`s (`llvm`-dialect kernels and what they use)."""
    return [inner for op in module.ops if isinstance(op, gpu.ModuleOp) for inner in op.body.ops]


def _kernels(ops: list[Operation]) -> list[llvm_dialect.FuncOp]:
    return [
        op for op in ops if isinstance(op, llvm_dialect.FuncOp) and KERNEL_ATTR in op.attributes
    ]


def kernel_names(module: ModuleOp) -> list[str]:
    """The names of the kernels (entry points) of `module`'s `gpu.module`s."""
    return [op.sym_name.data for op in _kernels(kernel_ops(module))]


def _f16_wrapper(stem: str, binary: bool) -> str:
    """An f16 math function computing in f32 through libdevice."""
    if binary:
        return (
            f"define internal half @__mlc_{stem}_f16(half %a, half %b) {{\n"
            "  %x = fpext half %a to float\n  %y = fpext half %b to float\n"
            f"  %r = call float @__nv_{stem}f(float %x, float %y)\n"
            "  %h = fptrunc float %r to half\n  ret half %h\n}\n"
            f"declare float @__nv_{stem}f(float, float)\n"
        )
    return (
        f"define internal half @__mlc_{stem}_f16(half %a) {{\n"
        "  %x = fpext half %a to float\n"
        f"  %r = call float @__nv_{stem}f(float %x)\n"
        "  %h = fptrunc float %r to half\n  ret half %h\n}\n"
        f"declare float @__nv_{stem}f(float)\n"
    )


def redirect_math(ir_text: str, declared: list[str]) -> str:
    """Calls NVPTX cannot select, redirected to libdevice (see the module docstring)."""
    wrappers: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        stem, type_ = match.group(1), match.group(2)
        if type_ == "f32":
            return f"@__nv_{stem}f"
        if type_ == "f64":
            return f"@__nv_{stem}"
        wrappers[stem] = _f16_wrapper(stem, stem in ("pow", "atan2"))
        return f"@__mlc_{stem}_f16"

    text = _without_repeated_declarations(_INTRINSIC.sub(replace, ir_text))
    for name in declared:  # libm functions (erf, log1pf, ...) have libdevice twins
        text = re.sub(rf'@"?{re.escape(name)}"?(?=\()', f"@__nv_{name}", text)
    for wrapper in wrappers.values():
        for line in wrapper.splitlines(keepends=True):
            if not (line.startswith("declare") and line.strip() in text):
                text += line
    return text


def _without_repeated_declarations(text: str) -> str:
    """Drop declarations that renaming made repeats (and those f16 wrappers replace)."""
    lines: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        if line.startswith("declare"):
            if "@__mlc_" in line or line in seen:
                continue
            seen.add(line)
        lines.append(line)
    return "\n".join(lines) + "\n"


def _mark_entry_points(translated: llvm_ir.Module, entry_points: set[str]) -> list[str]:
    """Make kernels PTX entry points; the external functions the kernels call."""
    declared: list[str] = []
    modern = llvm.llvm_version_info >= (20,)
    for function in translated.functions:
        if function.name in entry_points and modern:
            function.calling_convention = "ptx_kernel"
        elif function.name in entry_points:  # LLVM before 20 reads nvvm.annotations
            annotation = translated.add_metadata([function, "kernel", llvm_ir.IntType(32)(1)])
            translated.add_named_metadata("nvvm.annotations", annotation)
        elif function.is_declaration and not function.name.startswith("llvm."):
            declared.append(function.name)
    return declared


def launch_bounds(ops: list[Operation]) -> dict[str, dict[str, str]]:
    """Each kernel's NVVM launch bounds as LLVM function attributes (`"nvvm.maxntid"="256,1,1"`)."""
    bounds: dict[str, dict[str, str]] = {}
    for op in _kernels(ops):
        found: dict[str, str] = {}
        for name in _LAUNCH_BOUNDS:
            value = op.attributes.get(name)
            if isinstance(value, DenseArrayBase):
                found[name] = ",".join(str(v) for v in value.get_values())
            elif isinstance(value, IntegerAttr):
                found[name] = str(value.value.data)
        bounds[op.sym_name.data] = found
    return bounds


def _with_launch_bounds(text: str, bounds: dict[str, dict[str, str]]) -> str:
    """Append each kernel's launch bounds to its `define` line as string attributes."""

    def annotate(match: re.Match[str]) -> str:
        found = bounds.get(match.group(2) or match.group(3), {})
        attributes = "".join(f' "{name}"="{value}"' for name, value in found.items())
        return f"{match.group(1)}{attributes}\n{{"

    pattern = re.compile(r'^(define [^@\n]*@(?:"([^"]+)"|([\w.$]+))\(.*\)[^{\n]*?)\s*\{', re.M)
    return pattern.sub(annotate, text)


def _part_text(ops: list[Operation], entry_points: set[str], machine: llvm.TargetMachine) -> str:
    """The LLVM IR of one part's kernels: entry points external, every other function
    internal, launch bounds attached, math redirected to libdevice."""
    translated: llvm_ir.Module = ops_to_llvmlite(ops, StringAttr(TRIPLE))
    translated.triple = TRIPLE
    translated.data_layout = str(machine.target_data)
    declared = _mark_entry_points(translated, entry_points)
    for function in translated.functions:
        if not function.is_declaration and function.name not in entry_points:
            function.linkage = "internal"
    text = _with_launch_bounds(str(translated), launch_bounds(ops))
    return redirect_math(text, declared)


def to_ptx(module: ModuleOp, sm: str = "sm_90", processes: int | None = None) -> str:
    """
    PTX text for the kernels of `module` (after `convert-gpu-to-nvvm`). A program with
    many kernels is compiled in parts (`mlc.backend.ptx_parts`) by `processes`
    processes (this one and workers; one per CPU if None), each part's PTX kept in the
    disk cache under its LLVM IR, and the parts joined into one PTX module.
    """
    with collector.paused():
        return _ptx(module, sm, processes)


def _ptx(module: ModuleOp, sm: str, processes: int | None) -> str:
    machine = target_machine(sm)
    kernels = kernel_ops(module)
    entry_points = {op.sym_name.data for op in _kernels(kernels)}
    if not entry_points:
        raise PTXError("the module has no kernels (run the gpu pipeline first)")
    with timing.phase("translate kernels to LLVM IR"):
        parts = ptx_parts.split(kernels, entry_points)
        texts = [_part_text(part, entry_points, machine) for part in parts]
        for text in texts:
            _check_features(text, sm)
    libdevice = ""
    if any("@__nv_" in text for text in texts):
        _libdevice_bitcode()  # a PTXError if there is none
        libdevice = str(libdevice_path())
    target = ("ptx", sm, PTX_FEATURES[sm], libdevice)
    with timing.phase("PTX cache lookup"):
        stamp = kernel_cache.stamp(libdevice) if libdevice else ()
        keys = [code_key(text, (*target, *stamp)) for text in texts]
        found = [kernel_cache.load(key) for key in keys]
        done = {i: entry.compiled.object_code for i, entry in enumerate(found) if entry}
    missing = [index for index in range(len(texts)) if index not in done]
    with timing.phase("LLVM optimize and PTX codegen"):
        results = run_jobs([texts[i] for i in missing], target, processes)
    for index, (code, other) in zip(missing, results, strict=True):
        if code is None:
            raise PTXError(str(other))
        done[index] = code
        kernel_cache.store(keys[index], kernel_cache.Entry(CompiledObject(code, b"")))
    return ptx_parts.join([done[index].decode() for index in range(len(texts))])


def _check_features(text: str, sm: str) -> None:
    """Refuse kernels that need sm_80 for an older `sm`, or wgmma (sm_90a) for another
    target (kernels chosen for another)."""
    capability = compute_capability(sm)
    if not sm.endswith("a") and "wgmma." in text:
        raise PTXError(
            f"the kernels multiply by wgmma.mma_async, which only sm_90a has, not {sm}: "
            "compile for sm_90a or lower them with convert-contractions-to-gpu{wgmma=off}"
        )
    if capability >= ASYNC_COPY_SM:
        return
    for what, pattern in _SM80_FEATURES:
        if pattern.search(text):
            raise PTXError(
                f"the kernels {what}, which {sm} lacks (sm_80 and later): "
                f"lower them with convert-contractions-to-gpu{{sm={capability}}}"
            )
