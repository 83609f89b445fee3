"""
`cuTensorMapEncodeTiled` through ctypes: a checked `mlc.tensor_maps.TiledMap` encoded by
the driver for a device address (pycuda does not wrap the call). Compiled host code
makes the same call itself (`mlc.lowering.gpu.tensor_map_host`); this one serves Python
callers, such as a GPU test that the driver takes the maps mlc builds.
"""

import ctypes

from mlc.tensor_maps import GLOBAL_ALIGNMENT, MAP_ALIGNMENT, MAP_BYTES, TiledMap


def encode(libcuda: ctypes.CDLL, spec: TiledMap, address: int) -> bytes:
    """`spec`'s map of the tensor at device `address`, by the driver (one-line errors)."""
    if address % GLOBAL_ALIGNMENT:
        raise ValueError(f"tensor map: global address {address:#x} is not 16-byte aligned")
    data_type, rank, interleave, swizzle, promotion, fill = spec.arguments()
    room = (ctypes.c_uint8 * (MAP_BYTES + MAP_ALIGNMENT))()  # CUtensorMap is alignas(64)
    at = -ctypes.addressof(room) % MAP_ALIGNMENT + ctypes.addressof(room)
    u64s, u32s = ctypes.c_uint64 * rank, ctypes.c_uint32 * rank
    status = libcuda.cuTensorMapEncodeTiled(
        ctypes.c_void_p(at),
        ctypes.c_int(data_type),
        ctypes.c_uint32(rank),
        ctypes.c_void_p(address),
        u64s(*spec.dims),
        (ctypes.c_uint64 * max(rank - 1, 1))(*spec.strides),
        u32s(*spec.box),
        u32s(*spec.steps),
        ctypes.c_int(interleave),
        ctypes.c_int(swizzle),
        ctypes.c_int(promotion),
        ctypes.c_int(fill),
    )
    if status:
        raise ValueError(f"tensor map: cuTensorMapEncodeTiled refused {spec} (CUDA error {status})")
    return ctypes.string_at(at, MAP_BYTES)
