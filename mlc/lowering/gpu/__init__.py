"""
The GPU target: `linalg.generic`s on memrefs in, the `llvm` dialect out (kernels with
NVVM intrinsics, host code calling the CUDA driver).

    convert-contractions-to-gpu       contractions -> tiled gpu.launch (contraction/)
    convert-linalg-to-parallel-loops  other generics -> scf.parallel over scf.for
    fuse-row-epilogues                a row reduction's consumers join its loop
    convert-parallel-loops-to-gpu     scf.parallel -> gpu.launch (loop_mapping/)
    gpu-kernel-outlining              gpu.launch bodies -> gpu.func in gpu.module
    convert-gpu-to-nvvm               kernels -> llvm + NVVM intrinsics
    convert-gpu-host-to-llvm          host code -> llvm calling the CUDA driver
"""
