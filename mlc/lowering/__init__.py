"""
Every pass, in one folder per level of IR, in pipeline order:

    graph/                 ml -> ml (shape inference, canonicalization, chain reordering, licm)
    convert_ml_to_linalg/  ml -> linalg.generic on tensors
    linalg/                linalg on tensors: fusion, then bufferization to memrefs
    cpu/                   linalg on memrefs -> tiled loop nests and CPU kernels
    gpu/                   linalg on memrefs -> parallel loops -> gpu.launch -> kernels -> NVVM
    convert_to_llvm/       loops, memref, arith, math, func -> the llvm dialect
    support/               builders and rewrite drivers that every level shares

A folder imports only from itself, `support/`, the dialects and the folders before it.
"""
