"""The `target` fixture: a numerical test that takes it runs on the CPU and on `cuda`."""

import pytest

from tests.gpu.targets import TARGETS


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> str:
    """`cpu` or `cuda`: compile with `tests.gpu.targets.compile_for(module, target)`."""
    return request.param
