"""mlc's version: read by `mlc.__init__` and by the compile cache, whose keys include it."""

__version__ = "0.1.0"
