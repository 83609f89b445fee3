"""
The GPU target: `linalg.generic`s on memrefs in, the `llvm` dialect out (kernels with
NVVM intrinsics, host code calling the CUDA driver).

    convert-contractions-to-gpu       contractions -> tiled gpu.launch (contraction/)
    convert-linalg-to-parallel-loops  other generics -> scf.parallel over scf.for (loop_nests/)
    fuse-row-epilogues                a row reduction's consumers join its loop (row_fusion/)
    convert-parallel-loops-to-gpu     scf.parallel -> gpu.launch (loop_mapping/)
    gpu-kernel-outlining              gpu.launch bodies -> gpu.func in gpu.module
    convert-gpu-to-nvvm               kernels -> llvm + NVVM intrinsics
    convert-gpu-host-to-llvm          host code -> llvm calling the CUDA driver

The first two share `loop_analysis` (which dims are parallel, the sizes that pick a
register tile, a row or a warp) and `fills` (the fills a kernel absorbs).
"""
