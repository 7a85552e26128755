"""``tvm.error``: apache-tvm 0.27's exception classes, registered with tvm-ffi under their names.

An error raised in C++ (or by any tvm-ffi function) carries a *kind*; tvm-ffi turns it into the
Python class registered for that kind.  Registering these classes (``import tvm`` does) makes an
error of kind ``"InternalError"`` arrive as :class:`InternalError`, ``"RPCError"`` as
:class:`RPCError` and so on, exactly as under apache-tvm 0.27, so ``except tvm.error.RPCError``
in a deploy script keeps working.  tvm-ffi reports a plain C++ ``std::exception`` escaping a
function as kind ``"InternalError"``; tvm-runtime's own C boundaries do the same.

Every class derives from the builtin exception a script would otherwise catch (``RuntimeError``,
``AttributeError``, ``NotImplementedError``, ``TimeoutError``), so older ``except`` clauses still
match.
"""

from __future__ import annotations

from tvm_ffi import register_error

__all__ = [
    "DiagnosticError",
    "InternalError",
    "OpAttributeInvalid",
    "OpAttributeRequired",
    "OpAttributeUnImplemented",
    "OpError",
    "OpNotImplemented",
    "RPCError",
    "RPCSessionTimeoutError",
    "register_error",
]


@register_error
class InternalError(RuntimeError):
    """A failure inside the runtime or a C++ extension (also a foreign ``std::exception``)."""


@register_error
class RPCError(RuntimeError):
    """The remote side of an RPC session failed to handle a call."""


@register_error
class RPCSessionTimeoutError(RPCError, TimeoutError):
    """The RPC session's time on the remote server ran out."""


@register_error
class OpError(RuntimeError):
    """Base of the operator errors apache-tvm's frontends raise (kept for ``except`` clauses)."""


@register_error
class OpNotImplemented(OpError, NotImplementedError):  # noqa: N818 (0.27's name)
    """A frontend has no conversion for an operator."""


@register_error
class OpAttributeRequired(OpError, AttributeError):  # noqa: N818 (0.27's name)
    """An operator lacks an attribute a frontend needs."""


@register_error
class OpAttributeInvalid(OpError, AttributeError):  # noqa: N818 (0.27's name)
    """An operator attribute has a value a frontend cannot handle."""


@register_error
class OpAttributeUnImplemented(OpError, NotImplementedError):  # noqa: N818 (0.27's name)
    """A frontend does not support one of an operator's attributes."""


@register_error
class DiagnosticError(RuntimeError):
    """A compiler pass reported errors through its diagnostics (kept for ``except`` clauses)."""
