"""Settings for the whole test suite."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_compile_cache(tmp_path_factory: pytest.TempPathFactory):
    """Compiles in tests use a fresh on-disk cache, never the user's `~/.cache/mlc`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLC_CACHE_DIR", str(tmp_path_factory.mktemp("mlc-cache")))
        yield
