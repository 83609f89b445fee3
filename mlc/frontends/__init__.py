"""Frontends: ONNX models and traced Python functions, into the `ml` dialect."""
