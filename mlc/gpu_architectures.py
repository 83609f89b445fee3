"""
The NVIDIA architectures mlc builds kernels for, and what each can do.

Shared by the passes that choose kernels (`convert-contractions-to-gpu{sm=75}` takes
a compute capability), the pipeline and compiler that pass the choice down, and the
PTX backend that emits for it; none of them needs the others to know this.
"""

# Architecture -> the PTX ISA version asked of LLVM (8.0 runs on CUDA 12.0 drivers on).
PTX_FEATURES: dict[str, str] = {
    "sm_70": "+ptx80",
    "sm_75": "+ptx80",
    "sm_80": "+ptx80",
    "sm_86": "+ptx80",
    "sm_89": "+ptx80",
    "sm_90": "+ptx80",
    "sm_90a": "+ptx80",
}


def compute_capability(sm: str) -> int:
    """The compute capability an architecture name stands for: `sm_90a` -> 90."""
    return int(sm[3:].rstrip("a"))


WARP = 32  # threads a warp, on every architecture above

COMPUTE_CAPABILITIES = tuple(sorted({compute_capability(sm) for sm in PTX_FEATURES}))
# The first with `cp.async` (the tiled contractions' copy pipeline) and tf32 `mma.sync`.
ASYNC_COPY_SM = 80
