"""The backends the release train declares (packages/*/pyproject.toml, [tool.tvm-runtime], read by
packages/release_train.py) that are installed here: what the conformance suite is instantiated
over, one parameter a backend, so a new backend's wheel gets every conformance test by being
declared and installed.

A declared backend that is not installed is left out rather than skipped: `nox -s tests` installs
what the wheelhouse holds (every backend on the CI machine), and each backend's own folder
(tests/<backend>/) fails where its wheel is missing.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "packages"))
import release_train  # noqa: E402

Backend = release_train.Package


def _installed(package: Backend) -> bool:
    try:
        md.distribution(package.distribution)
    except md.PackageNotFoundError:
        return False
    return True


BACKENDS: list[Backend] = [p for p in release_train.backends() if _installed(p)]


def each_backend(select=lambda backend: True) -> pytest.MarkDecorator:
    """Parametrize a test over the installed backends (``select`` narrows them), ids = names."""
    chosen = [b for b in BACKENDS if select(b)]
    return pytest.mark.parametrize("backend", chosen, ids=[b.name for b in chosen])


def each_module_kind() -> pytest.MarkDecorator:
    """Parametrize a test over (backend, module kind) for every kind a backend declares."""
    pairs = [(b, kind) for b in BACKENDS for kind in b.module_kinds]
    return pytest.mark.parametrize("backend,kind", pairs, ids=[kind for _, kind in pairs])


def hook(backend: Backend) -> ModuleType:
    """The backend's Python hook, tvm.backend.<name>."""
    return importlib.import_module(f"tvm.backend.{backend.name}")


def dso(backend: Backend) -> Path:
    """The backend's DSO, shipped next to its hook."""
    return Path(hook(backend).__file__).parent / f"libtvm_runtime_{backend.name}.so"
