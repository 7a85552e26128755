"""``relax.run.print`` and ``relax.run.assert_op``: what ``R.print`` / ``R.assert_op`` call.

apache-tvm 0.27 registers both from its Python package, and they format with Python's
``str.format``, so they live here too (registered at ``import tvm``); the other ``relax.run.*``
functions are C++ in the core (src/core/vm/relax_run.cc).  Values render as 0.27 renders them:
a tensor as its numpy text, a tuple as ``(a, b)``, anything else as ``str()``.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi

from ._tensor import Tensor


def _render(value: Any) -> str:
    if isinstance(value, Tensor):
        return str(value.numpy())
    if isinstance(value, tvm_ffi.Array):
        return "(" + ", ".join(_render(item) for item in value) + ")"
    return str(value)


# override=True: re-importing this module (importlib.reload) must not fail on itself.
@tvm_ffi.register_global_func("relax.run.print", override=True)
def _relax_print(format_str: str, *values: Any) -> None:
    """Print ``values`` formatted with ``format_str`` (separated by spaces when it is empty)."""
    rendered = [_render(v) for v in values]
    print(format_str.format(*rendered) if format_str else " ".join(rendered))


@tvm_ffi.register_global_func("relax.run.assert_op", override=True)
def _relax_assert(condition: Any, format_str: str, *values: Any) -> None:
    """Raise AssertionError with the formatted message when ``condition`` is false."""
    if not isinstance(format_str, str):
        raise ValueError(f"R.assert_op: the format must be a string, got {type(format_str).__name__}")
    if isinstance(condition, Tensor):
        if condition.dtype != "bool" or len(condition.shape) != 0:
            raise ValueError(
                "R.assert_op: the condition must be a bool scalar, got a "
                f"{condition.dtype} tensor of shape {tuple(condition.shape)}"
            )
        holds = bool(condition.numpy())
    elif isinstance(condition, (bool, int)):
        holds = bool(condition)
    else:
        raise ValueError(
            f"R.assert_op: the condition must be a bool, an int or a tensor, got {type(condition).__name__}"
        )
    if holds:
        return
    if format_str or values:
        rendered = [_render(v) for v in values]
        raise AssertionError(format_str.format(*rendered) if format_str else ", ".join(rendered))
    raise AssertionError("Assertion Failed")
