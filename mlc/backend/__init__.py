"""Code generation and execution: llvmlite JIT, PTX and pycuda, the compile cache."""
