"""
The GPU's fused attention kernel (`convert-attention-to-gpu`).

In: `ml.attention` on tensors (the `linalg` stage), then its stand-in generic on memrefs
(the `parallel-loops` stage, after `bufferize`). Out: one `gpu.launch` per attention,
its kernel the whole blocked online softmax, the scores never in global memory:
`flash` on the tensor cores (f16/bf16, head dims 64 and 128, sm_80 on), `kernel` with
f32 FMAs for the rest. `stand_in` builds and reads the stand-in generic that carries the op through
`bufferize`; `head_layout` picks the head split and merge transposes it absorbs.
"""
