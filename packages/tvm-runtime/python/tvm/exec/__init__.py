"""Command-line entry points (``python -m tvm.exec.<name>``)."""
