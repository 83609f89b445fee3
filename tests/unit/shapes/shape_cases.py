"""
What the tests of `mlc.shapes` share: hypothesis strategies and settings, numpy shapes,
and the `ShapeError` expectation.

Static results are checked against numpy wherever numpy has the operation (on
`np.empty` arrays, so only shapes are computed). Dynamic dimensions (`DYNAMIC`, printed
`?`) are checked to stay dynamic unless the rule pins them, and every error case to
raise `ShapeError` with a message that names the dimensions involved.
"""

import re

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from mlc.shapes import DYNAMIC, ShapeError

D = DYNAMIC

# Small dims (0 included, as numpy allows empty tensors) keep `np.empty` cheap and make
# broadcast conflicts frequent enough to exercise the error path.
dims = st.integers(min_value=0, max_value=4)
shape_st = st.lists(dims, max_size=4).map(tuple)

# No example database, so test runs write nothing to the tree; no deadline, as numpy's
# first call may be slow on a loaded machine.
hypothesis_settings = settings(database=None, max_examples=200, deadline=None)


def np_shape(array: np.ndarray) -> tuple[int, ...]:
    return tuple(int(d) for d in array.shape)


def raises_shape_error(*fragments: str) -> pytest.RaisesExc[ShapeError]:
    """Expect a ShapeError whose message contains every fragment, in order."""
    return pytest.raises(ShapeError, match=".*".join(re.escape(f) for f in fragments))
