"""
convert-attention-to-gpu: each `ml.attention` becomes one fused kernel on the GPU.

Two phases, one pass run twice by the `gpu` pipeline (docs/design/attention.md):

- On tensors (head of the `linalg` stage, before `decompose-attention`): each
  `ml.attention` the kernel takes (f32, f16, bf16; static head and value dims from 2 to
  128; static head counts) becomes its stand-in generic
  (`mlc.lowering.gpu.attention.stand_in`), which `bufferize` carries to memrefs; the
  others stay for `decompose-attention`, with a remark saying why. Head split and
  merge transposes private to the attention fold into the stand-in's operand layout
  (`mlc.lowering.gpu.attention.head_layout`): no copy kernels around it.
- On memrefs (after `bufferize` in the `parallel-loops` stage): each stand-in becomes a
  `gpu.launch` of a fused kernel, one CTA per (batch..., head, 64 query rows), the
  scores never in global memory. f16 and bf16 with head and value dims 64 or 128 on
  sm_80 and later (`sm`, default 80) take the tensor cores
  (`mlc.lowering.gpu.attention.flash`: FlashAttention-2's warps, mma.sync, ldmatrix,
  cp.async, dynamic shared memory); the rest the FMA kernel
  (`mlc.lowering.gpu.attention.kernel`: a thread a query row, the online softmax over
  blocks of 32 keys), 16-bit ones with a remark saying why.

Grouped K/V heads are indexed (`h // G`), causal and mask applied in the kernel,
sequence lengths read at run time.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, MemRefType, ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mlc.diagnostics import op_error, op_remark
from mlc.dialects import ml
from mlc.gpu_architectures import ASYNC_COPY_SM, COMPUTE_CAPABILITIES
from mlc.lowering.gpu.attention import flash, head_layout, kernel, stand_in
from mlc.lowering.gpu.attention.stand_in import element
from mlc.lowering.gpu.contraction.emitter import Emitter


class AttentionToStandIn(RewritePattern):
    """`ml.attention` on tensors to its stand-in generic (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.AttentionOp, rewriter: PatternRewriter) -> None:
        if (why := stand_in.declined(op)) is not None:
            op_remark(op, f"attention left to decompose-attention: {why}")
            return
        folded = head_layout.fold(op)
        emit = Emitter(rewriter, InsertPoint.before(op), op)
        result = stand_in.stand_in(emit, op, folded)
        if folded.output is not None:
            rewriter.replace_all_uses_with(folded.output.result, result)
            rewriter.erase(folded.output)
        else:
            rewriter.replace_all_uses_with(op.result, result)
        rewriter.erase(op)
        for transpose in dict.fromkeys(folded.inputs.values()):  # q, k, v may share one
            if not transpose.result.uses:
                rewriter.erase(transpose)


@dataclass
class StandInToKernel(RewritePattern):
    """A stand-in generic on memrefs to the fused kernel's launch (module docstring)."""

    sm: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if (attention := stand_in.read(op)) is None:
            if op.library_call is not None and op.library_call.data == stand_in.LIBRARY_CALL:
                raise op_error(op, "convert-attention-to-gpu: malformed attention stand-in")
            return
        if op.res or not isinstance(attention.q.type, MemRefType):
            return  # still on tensors: bufferize comes first
        emit = Emitter(rewriter, InsertPoint.before(op), op)
        if (why := flash.declined(attention, self.sm)) is None:
            flash.launch(emit, attention)
            return
        if not isinstance(element(attention.q), Float32Type):
            op_remark(op, f"attention on the FMA kernel, not the tensor cores: {why}")
        kernel.launch(emit, attention)


@dataclass(frozen=True)
class ConvertAttentionToGPUPass(ModulePass):
    """`ml.attention` to its stand-in, stand-ins on memrefs to the fused kernel."""

    name = "convert-attention-to-gpu"

    sm: int = ASYNC_COPY_SM
    """The compute capability kernels are built for (the tensor cores from 80)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.sm not in COMPUTE_CAPABILITIES:
            known = ", ".join(map(str, COMPUTE_CAPABILITIES))
            raise ValueError(f"sm={self.sm}: not a compute capability mlc targets ({known})")
        for pattern in (AttentionToStandIn(), StandInToKernel(self.sm)):
            PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
