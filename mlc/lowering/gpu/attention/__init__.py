"""
The GPU's fused attention kernel (`convert-attention-to-gpu`).

In: `ml.attention` on tensors (the `linalg` stage), then its stand-in generic on memrefs
(the `parallel-loops` stage, after `bufferize`). Out: one `gpu.launch` per attention,
its kernel the whole blocked online softmax (`kernel`), the scores never in global
memory. `stand_in` builds and reads the stand-in generic that carries the op through
`bufferize`.
"""
