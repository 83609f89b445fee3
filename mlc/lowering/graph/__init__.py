"""
Graph passes: `ml` + `scf` on tensors in, `ml` + `scf` on tensors out.

Shape inference, canonicalization (algebraic rules and constant folding, in `patterns/`),
`simplify-graph` (the two until a fixed point), batch-norm folding, matmul-chain
reordering and loop-invariant code motion. Nothing here knows a target.
"""
