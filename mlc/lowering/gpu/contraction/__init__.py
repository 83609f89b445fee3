"""
The shared-memory tiled contraction kernel of `convert-contractions-to-gpu`: which
generics it takes (matmuls, convolutions as implicit GEMMs), the tile shapes, how
operand slices reach shared memory (`cp.async`), the f32 and tf32 (`mma.sync`) inner
steps, and the epilogues and fills it absorbs; and the sm_90a kernel of 16-bit matmuls
(`wgmma_kernel`, `wgmma_layout`). `linalg.generic` on memrefs in,
`gpu.launch` out.
"""
