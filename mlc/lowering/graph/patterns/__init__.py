"""Canonicalization and shape-inference patterns that dialect traits attach."""
