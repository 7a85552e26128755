"""Submodules a package imports on first use (a module-level ``__getattr__``, PEP 562), so that
importing the package stays cheap."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable


def submodules_on_first_use(package: str, names: tuple[str, ...]) -> Callable[[str], ModuleType]:
    """The ``__getattr__`` of ``package`` that imports ``package.<name>`` for each of ``names``."""

    def module_getattr(name: str) -> ModuleType:
        if name in names:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return module_getattr
