"""Passes, grouped by the level of IR they work on."""
