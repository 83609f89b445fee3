"""The command-line drivers: mlc-opt (and, with the backends, mlc-translate, mlc-run)."""
