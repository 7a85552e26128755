"""The README.md written into a deploy bundle."""

from __future__ import annotations

import json

from ._sources import Source


def _version(source: Source, dist: str) -> str:
    """The version in the .dist-info of ``dist`` (normalized name) in the source's layout."""
    for root in (source.tvm_root, source.ffi_root):
        for info in sorted(root.glob(f"{dist}-*.dist-info")):
            return info.name[len(dist) + 1 : -len(".dist-info")]
    return "unknown"


def readme(source: Source, backends: list[str]) -> str:
    libs = ["libtvm_runtime.so", "libtvm_ffi.so", *(f"libtvm_runtime_{n}.so" for n in backends)]
    targets = ["tvm_runtime::runtime", *(f"tvm_runtime::{n}" for n in backends)]
    versions = {
        "tvm-runtime": _version(source, "tvm_runtime"),
        "apache-tvm-ffi": _version(source, "apache_tvm_ffi"),
    }
    versions.update({f"tvm-runtime-{n}": _version(source, f"tvm_runtime_{n}") for n in backends})
    # No path of the machine that made it: the bundle is for another one.
    made_from = "the installed wheels" if source.origin == "the installed wheels" else "wheel files"
    return f"""# tvm-runtime deploy bundle ({source.platform})

Made by `python -m tvm.deploy bundle` from {made_from}; needs no Python or pip.

Versions: `{json.dumps(versions)}`

- `lib/`: {", ".join(f"`{lib}`" for lib in libs)} (each with RUNPATH `$ORIGIN`, so they
  find each other here; the core looks for backends in this directory too)
- `include/`: the core's headers (`tvm_runtime/`), tvm-ffi's (`tvm/ffi/`) and `dlpack/`
- `lib/cmake/tvm_runtime/`: the CMake package

Build an application against it:

```cmake
find_package(tvm_runtime CONFIG REQUIRED)   # cmake -Dtvm_runtime_ROOT=<this folder>
target_link_libraries(app PRIVATE {" ".join(targets)})
```

Ship `lib/` with the application, e.g. beside the executable with
`set_target_properties(app PROPERTIES INSTALL_RPATH "$ORIGIN/lib")` (a build-tree executable
has an RPATH to this folder's `lib/` already). The bundle's system requirements are the wheels':
glibc 2.28 or newer, libstdc++ and libgcc_s (GCC 8 or newer), and the drivers of each backend.
"""
