"""
The runtime's part in tensor maps (`mlc.tensor_maps`).

Compiled host code encodes its maps itself (`mlc.lowering.gpu.tensor_map_host`) into
one device buffer per launch site, which `SiteMaps` allocates when a program is loaded;
the program frees them when it is dropped, with its constants.

`encode` makes the driver's `cuTensorMapEncodeTiled` call through ctypes (pycuda does
not wrap it) for Python callers, such as a GPU test that the driver takes the maps mlc
builds.
"""

import contextlib
import ctypes
import threading
from collections.abc import Callable, Iterator

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

from mlc.backend.cuda_abi import TENSOR_MAP_BUFFER, TENSOR_MAP_PREFIX
from mlc.tensor_maps import GLOBAL_ALIGNMENT, MAP_ALIGNMENT, MAP_BYTES, TiledMap


class SiteMaps:
    """
    A loaded program's tensor-map buffers: one of `MAP_BYTES` per launch site of its host
    code (`malloc`), its address stored in the site's global (at `global_address(name)`).

    A site's host code checks the tensor its map was last encoded for, and the launch
    after it reads the buffer: a second call of the program in between could encode
    another tensor's map into it. `serial` runs the calls of a program with sites one at
    a time (a lock; none without sites). Iterating gives the buffers, for the program to
    free with its other device memory.
    """

    def __init__(
        self, host: ModuleOp, malloc: Callable[[int], int], global_address: Callable[[str], int]
    ):
        self.buffers: list[int] = []
        for op in host.ops:
            name = op.sym_name.data if isinstance(op, llvm.GlobalOp) else ""
            if name.startswith(TENSOR_MAP_PREFIX) and name.endswith(TENSOR_MAP_BUFFER):
                self.buffers.append(malloc(MAP_BYTES))
                ctypes.c_uint64.from_address(global_address(name)).value = self.buffers[-1]
        self.serial = threading.Lock() if self.buffers else contextlib.nullcontext()

    def __iter__(self) -> Iterator[int]:
        return iter(self.buffers)


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
