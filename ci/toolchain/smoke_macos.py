"""The first checks of the macOS arm64 wheels on a Mac (release.yml's test-macos-arm64 job).

    python ci/toolchain/smoke_macos.py     # one line per check; exits 1 on the first failure

The wheels are cross-built on Linux and only checked statically there (ci/check_macos_wheels.py):
this is the first place their Mach-O files are mapped, bound and run.  It checks what the static
rules cannot: dyld loads the core and every installed backend DSO (rpaths, two-level bindings
against the system libc++ and libtvm_ffi.dylib, the ad-hoc signature), a C++ exception thrown
in the core is caught as a Python exception (one C++ runtime shared with tvm-ffi), and the CPU
device reports the host's memory (sysctl / Mach host statistics instead of Linux's sysinfo).
"""

from __future__ import annotations

import platform
import sys

import numpy as np


def _ok(what: str) -> None:
    print(f"ok   {what}", flush=True)


def main() -> int:
    if sys.platform != "darwin" or platform.machine() != "arm64":
        raise SystemExit(f"not on macOS arm64 but {sys.platform} {platform.machine()}")
    import tvm
    from tvm.backend._report import collect

    _ok(f"import tvm {tvm.__version__} on macOS {platform.mac_ver()[0]} arm64")
    a = np.arange(1024, dtype="float32")
    np.testing.assert_array_equal(tvm.runtime.tensor(a).numpy(), a)
    _ok("a CPU tensor round-trips through the core")
    dev = tvm.cpu(0)
    total = dev.total_global_memory
    if not (isinstance(total, int) and total > 0):
        raise SystemExit(f"the CPU device reports total memory {total!r}")
    _ok(f"the CPU device reports {total / 2**30:.1f} GiB of host memory")
    try:
        tvm.runtime.load_module("/nonexistent/model.dylib")
    except Exception as err:  # noqa: BLE001 - any Python exception: it crossed the C++ runtime
        _ok(f"a C++ error of the core arrives as {type(err).__name__}")
    else:
        raise SystemExit("loading a missing library raised nothing")
    # Every installed backend's DSO must load: dyld resolved its rpaths to the core and tvm-ffi.
    backends = collect()["backends"]
    if not backends:
        raise SystemExit("no backend installed (expected tvm[all]: extra, webgpu, ...)")
    for backend in backends:
        if backend["status"] != "loaded":
            raise SystemExit(f"backend {backend['name']}: {backend['status']}: {backend['reason']}")
        _ok(f"backend {backend['name']} loaded from {backend['library']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
