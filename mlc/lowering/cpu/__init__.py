"""
The CPU target: `linalg.generic`s on memrefs in, loop nests on memrefs out.

`linalg-tile` replaces each generic by a kernel: the BLIS-style matmul nest (packing and
a register micro-kernel), matrix-vector products, convolutions as implicit GEMMs, row
blocks for softmax-like chains, and `scf.parallel` blocks for the rest.
`promote-accumulators` keeps reductions in registers across their loops.
"""
