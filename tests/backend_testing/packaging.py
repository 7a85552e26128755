"""What every backend wheel must be: only its namespace portion, its entry point, no vendor
library linked."""

from __future__ import annotations

import importlib.metadata as md
import os
from pathlib import Path

from backend_testing.elf import needed_libraries


def check_ships_only_its_namespace_portion(backend: str) -> None:
    """tvm-runtime-<backend> installs tvm/backend/<backend>/ and nothing else (the core owns
    the rest of the namespace), and pins the core's ABI series."""
    dist = md.distribution(f"tvm-runtime-{backend}")
    files = [str(f) for f in dist.files or []]
    payload = [f for f in files if ".dist-info/" not in f]
    assert f"tvm/backend/{backend}/__init__.py" in payload
    assert f"tvm/backend/{backend}/libtvm_runtime_{backend}.so" in payload
    assert all(f.startswith(f"tvm/backend/{backend}/") for f in payload), payload
    assert any(r.startswith("tvm-runtime") and "<0.2" in r for r in dist.requires or [])


def check_entry_point(backend: str) -> None:
    """The core discovers the backend through its `tvm.backends` entry point, whose hook declares
    the backend (hook API 1.1): its name and the DSO shipped next to it."""
    (ep,) = [e for e in md.entry_points(group="tvm.backends") if e.name == backend]
    assert ep.value == f"tvm.backend.{backend}"
    hook = ep.load()
    assert hook.BACKEND.name == backend
    assert Path(hook.BACKEND.library) == Path(hook.__file__).parent / f"libtvm_runtime_{backend}.so"


def check_links_no_vendor_library(so: str | os.PathLike, vendor_markers: tuple[str, ...]) -> None:
    """The backend DSO links the core only: the vendor library is opened at first device use,
    so a machine without the driver can still import the wheel."""
    needed = needed_libraries(so)
    assert "libtvm_runtime.so" in needed
    assert not [n for n in needed if any(m in n for m in vendor_markers)], needed
