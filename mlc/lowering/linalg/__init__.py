"""
linalg on tensors in, linalg on memrefs out.

`linalg-fuse-elementwise` fuses producers into consumers and epilogues into contractions
while values are still tensors; `bufferize` then gives every tensor a buffer, in place
where it is safe. `contraction` is the analysis both targets share: which generics are
(batched) matmuls and which elementwise epilogue finishes them. `lower-affine` lowers
the `affine` loops and indices that both targets' loop conversions of linalg leave.
"""
