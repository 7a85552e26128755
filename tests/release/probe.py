"""Runs inside a test environment (its own interpreter) and prints one JSON report line.

    python probe.py [ACTION ...]

Actions: ``run:cpu`` / ``run:opencl`` / ``run:vulkan`` run the ``add`` fixture of that target
(tests/artifacts/<target>/add.so, inputs and numpy's expected output from its .npz);
``mixed`` loads tests/artifacts/multitarget/mixed.so, calls each of its functions and each kernel
of its device modules directly;
``import:<module>`` imports a module.  Results are "ok", "absent: <driver status>" (no device
on this machine) or "error: <ExceptionType>: <message>".  The report also holds the installed
distributions, where tvm and tvm_ffi were imported from, the RuntimeWarnings of ``import tvm``,
every backend record and the vendor libraries mapped into the process (/proc/self/maps).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.metadata as md
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ARTIFACTS = Path(os.environ["TVM_TEST_ARTIFACTS"])
DISTS = ("tvm-runtime", "tvm-runtime-opencl", "tvm-runtime-vulkan", "tvm-runtime-cuda", "apache-tvm-ffi")
ADD_CASES = {  # target -> (artifact, input keys, output key, device type)
    "cpu": ("cpu/add.so", ("a", "b"), "c", 1),
    "opencl": ("opencl/add.so", ("a", "b"), "c", 4),
    "vulkan": ("vulkan/add.so", ("a_0", "b_0"), "c_0", 7),
}


def error(err: BaseException) -> str:
    return f"error: {type(err).__name__}: {err}"


# A tensor that another framework (torch, cupy) owns on a device this environment has no backend
# for: the host code's argument checks pass and the kernel call is reached.  Host memory labelled
# with the device type is enough because the kernel must refuse before touching it.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class ForeignTensor:
    """A float32 numpy buffer exported through DLPack as if it lived on ``device_type``."""

    def __init__(self, array: np.ndarray, device_type: int) -> None:
        assert array.dtype == np.float32 and array.flags.c_contiguous
        self.array = array
        self.device_type = device_type
        self.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.device, t.ndim = array.ctypes.data, _DLDevice(device_type, 0), array.ndim
        t.dtype, t.shape = _DLDataType(2, 32, 1), self.shape

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return _capsule_new(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device_type, 0)


def run_add(tvm: Any, target: str) -> str:
    rel, inputs, output, device_type = ADD_CASES[target]
    dev = tvm.device(device_type, 0)
    if not dev.exist:
        status = tvm.get_global_func("runtime.DeviceDriverStatus")(device_type) if device_type != 1 else ""
        return f"absent: {status}"
    data = np.load(ARTIFACTS / rel.replace(".so", ".npz"))
    mod = tvm.runtime.load_module(str(ARTIFACTS / rel))
    out = tvm.runtime.empty(data[output].shape, str(data[output].dtype), dev)
    mod["add"](*[tvm.runtime.tensor(data[k], dev) for k in inputs], out)
    np.testing.assert_allclose(out.numpy(), data[output], rtol=1e-6, atol=1e-6)
    return "ok"


def run_mixed(tvm: Any, results: dict[str, str]) -> None:
    import tvm_ffi

    folder = ARTIFACTS / "multitarget"
    manifest = json.loads((folder / "manifest.json").read_text())
    data = np.load(folder / manifest["npz"])
    try:
        mod = tvm.runtime.load_module(str(folder / manifest["file"]))
        results["mixed:load"] = "ok"
    except Exception as err:  # noqa: BLE001 - reported, the test decides
        results["mixed:load"] = error(err)
        return
    # Each device module answers exactly its own kernels (a stand-in for a missing backend must
    # not shadow another module's), and calling one of them directly names what is missing.
    every_kernel = [k for names in manifest["kernels"].values() for k in names]
    for imported in mod.imports:
        owned = [k for k in every_kernel if imported.implements_function(k)]
        results[f"owns:{imported.kind}"] = ",".join(owned)
        for kernel in owned:
            try:
                imported[kernel]()
                results[f"kernel:{kernel}"] = "ran without arguments"
            except Exception as err:  # noqa: BLE001
                results[f"kernel:{kernel}"] = error(err)
    a = np.ascontiguousarray(data[manifest["input"]])
    for fn in manifest["functions"]:
        dev = tvm.device(fn["device_type"], 0)
        try:
            if dev.exist:
                out = tvm.runtime.empty(a.shape, "float32", dev)
                mod[fn["name"]](tvm.runtime.tensor(a, dev), out)
                np.testing.assert_allclose(out.numpy(), data[fn["output"]], rtol=1e-6, atol=1e-6)
                results[f"mixed:{fn['name']}"] = "ok"
            else:
                holders = [
                    ForeignTensor(a.copy(), fn["device_type"]),
                    ForeignTensor(np.empty_like(a), fn["device_type"]),
                ]
                mod[fn["name"]](*[tvm_ffi.from_dlpack(h) for h in holders])
                results[f"mixed:{fn['name']}"] = "ran on a foreign tensor without its device"
        except Exception as err:  # noqa: BLE001
            results[f"mixed:{fn['name']}"] = error(err)


def mapped_vendor_libraries() -> list[str]:
    found: list[str] = []
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            path = line.split()[-1]
            name = os.path.basename(path)
            if name.startswith(("libOpenCL.so", "libvulkan.so")) and path not in found:
                found.append(path)
    return found


def main(actions: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"versions": {}, "results": {}, "warnings": [], "backends": {}}
    for dist in DISTS:
        try:
            report["versions"][dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    import tvm_ffi

    report["tvm_ffi_file"] = tvm_ffi.__file__
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import tvm

            tvm.runtime  # noqa: B018 - a namespace-package `tvm` (no core) fails here
        report["warnings"] = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        report["tvm_file"] = tvm.__file__
        for name, record in tvm.backend.list_backends().items():
            report["backends"][name] = {
                k: str(getattr(record, k, "")) for k in ("status", "reason", "fix", "distribution", "version")
            }
    except Exception as err:  # noqa: BLE001
        report["import_tvm"] = error(err)
        tvm = None
    for action in actions:
        try:
            if action.startswith("import:"):
                importlib.import_module(action.split(":", 1)[1])
                report["results"][action] = "ok"
            elif tvm is None:
                report["results"][action] = "error: import tvm failed"
            elif action.startswith("run:"):
                report["results"][action] = run_add(tvm, action.split(":", 1)[1])
            elif action == "mixed":
                run_mixed(tvm, report["results"])
            else:
                raise ValueError(f"unknown probe action {action!r}")
        except Exception as err:  # noqa: BLE001
            report["results"][action] = error(err)
    report["vendor_libraries"] = mapped_vendor_libraries()
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
