"""mlc's own dialects; the standard ones come from xDSL."""
