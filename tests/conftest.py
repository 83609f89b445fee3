"""Settings for the whole test suite."""

import os
from pathlib import Path

import pytest

GPU_SUITE = Path(__file__).parent / "gpu"
PTX_SUITE = "test_ptx_architectures.py"  # every case of it is about PTX: never sampled


@pytest.fixture(autouse=True, scope="session")
def _private_compile_cache(tmp_path_factory: pytest.TempPathFactory):
    """Compiles in tests use a fresh on-disk cache, never the user's `~/.cache/mlc`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLC_CACHE_DIR", str(tmp_path_factory.mktemp("mlc-cache")))
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """
    Without a GPU, the `cuda` twins of the numerical suites skip before they compile.

    Lowering each of them through the gpu pipeline to check its PTX with ptxas costs
    about half a second per test, minutes for the whole suite on two cores, and adds
    little to what the architecture suite (tests/gpu/test_ptx_architectures.py), the
    tests/gpu checks that need no GPU (registers, PTX of each kernel family) and the lit
    tests check. `make test-full` sets `MLC_TEST_PTX=1`, which lowers every twin, and
    every numerics case of tests/gpu, and assembles its PTX as
    `tests.gpu.targets.compile_for` describes.
    """
    if os.environ.get("MLC_TEST_PTX") == "1":
        return
    from tests.gpu.targets import gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"{reason} (MLC_TEST_PTX=1 assembles its PTX)")
    for item in items:
        if item.get_closest_marker("gpu") is None:  # not `keywords`: a folder named gpu is one
            continue
        if not item.path.is_relative_to(GPU_SUITE) or item.path.name != PTX_SUITE:
            item.add_marker(skip)
