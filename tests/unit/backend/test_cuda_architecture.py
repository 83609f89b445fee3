"""The architecture a device's kernels are built for (`mlc.backend.cuda.architecture`)."""

import pytest

from mlc.backend.cuda import CudaUnavailableError, architecture


@pytest.mark.parametrize(
    "capability, sm",
    [((9, 0), "sm_90a"), ((8, 0), "sm_80"), ((8, 6), "sm_86"), ((8, 9), "sm_89"),
     ((10, 0), "sm_90"), ((12, 0), "sm_90"), ((7, 5), "sm_75")],
)  # fmt: skip
def test_architecture(capability, sm):
    """A 9.0 device (H100, H200) gets sm_90a, whose wgmma only it runs; a newer one the
    newest portable target."""
    assert architecture(capability) == sm


def test_too_old():
    with pytest.raises(CudaUnavailableError, match="older than mlc's oldest target sm_70"):
        architecture((6, 1))
