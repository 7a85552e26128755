"""Which vendor libraries a backend has mapped into the process: after importing it, and (for a
device backend) after the first device use, ``tvm.device(<backend>, 0).exist``.

    python -m children.library_mapping <backend> <library>...

A library counts as mapped when a file whose name starts with ``<library>`` is in /proc/self/maps
(the wgpu package ships libwgpu_native-release.so).
"""

from __future__ import annotations

import importlib
import json
import sys


def mapped(libraries: list[str]) -> list[str]:
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1].rsplit("/", 1)[-1] for line in maps if "/" in line}
    return [lib for lib in libraries if any(name.startswith(lib) for name in names)]


def main(backend: str, libraries: list[str], device: bool) -> dict:
    import tvm
    from tvm.backend import _dso

    importlib.import_module(f"tvm.backend.{backend}")
    out = {"registered": backend in _dso.LOADED, "after_import": mapped(libraries)}
    if device:
        out["exist"] = tvm.device(backend, 0).exist
        out["after_first_use"] = mapped(libraries)
    return out


if __name__ == "__main__":
    args = [a for a in sys.argv[2:] if a != "--device"]
    print("RESULT:" + json.dumps(main(sys.argv[1], args, "--device" in sys.argv[2:])))
