"""
How `convert-parallel-loops-to-gpu` maps loops onto threads: four iterations a thread
with 16-byte accesses (`vector_lanes`), row reductions shared by a warp
(`warp_reduction`, `warp_vectors`), row scans shared by a warp (`warp_scan`), the warp
shuffles both use (`shuffles`), and small buffers every row reads staged in shared
memory (`row_staging`). `scf.parallel` in, `gpu.launch` bodies out.
"""
