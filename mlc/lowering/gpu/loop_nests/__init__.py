"""
How `convert-linalg-to-parallel-loops` builds a generic's `scf.parallel` over `scf.for`
nest: the loops, loads and stores at the generic's location (`loop_emitter`), several
outputs an iteration in registers (`register_tile`), the reduction loops carrying
them, a fused epilogue peeled after (`carried_outputs`), and a scan's running totals
carried the same way (`scan_loops`). `linalg.generic` on memrefs in, `scf.parallel` out.
"""
