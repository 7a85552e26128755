"""An artifact built to a convention tvm-runtime does not know is refused at load with an error
naming what is unknown, the compilers whose artifacts run (apache-tvm 0.25, 0.26 and 0.27) and
what to do, never a crash.  The fixtures are binary-edited copies of the releases' real artifacts
(tests/artifacts/releases): a context symbol, the VM format version, a device-module kind and
format renamed to values no release uses; plus a library whose host code calls a runtime
function nothing provides.  All are loaded in one child process, so a signal would show as its
exit status.
"""

from __future__ import annotations

import gzip
import shutil
import textwrap

import pytest
from backend_testing.payloads import packed_str
from compat_releases import MANIFESTS, RELEASES

from conftest import child_result, run_python

SUPPORTED = "apache-tvm 0.25, 0.26 and 0.27"


def release_library(version: str, file: str) -> bytes:
    (case,) = [c for c in MANIFESTS[version]["cases"] if c["file"] == file]
    return gzip.decompress((RELEASES / version / case["file"]).read_bytes())


def edited(data: bytes, old: bytes, new: bytes, count: int = -1) -> bytes:
    assert len(old) == len(new) and old in data, old
    return data.replace(old, new, count)


# name -> (release, library, bytes replaced, replacement, what the error must name)
EDITS = {
    "0.25 lookup slot renamed": (
        "0.25.0.post1",
        "opencl/dyn_muladd.so.gz",
        b"__TVMBackendGetFuncFromEnv",
        b"__TVMBackendGetFuncFromEnZ",
        "__TVMBackendGetFuncFromEnZ",
    ),
    "0.27 init-once slot renamed": (
        "0.27.0.post1",
        "opencl/workspace.so.gz",
        b"__TVMFFIHandleInitOnce",
        b"__TVMFFIHandleInitTwo_",
        "__TVMFFIHandleInitTwo_",
    ),
    "workspace slot renamed": (
        "0.26.0",
        "cpu/workspace.so.gz",
        b"__TVMBackendAllocWorkspace",
        b"__TVMBackendAllocWorkspacX",
        "__TVMBackendAllocWorkspacX",
    ),
    "library context renamed": (
        "0.27.0.post1",
        "opencl/multi_out.so.gz",
        b"__tvm_ffi__library_ctx",
        b"__tvm_ffi__library_ctX",
        "__tvm_ffi__library_ctX",
    ),
    "VM format 0.99": ("0.25.0.post1", "cpu/mlp_dyn.so.gz", packed_str(b"0.14"), packed_str(b"0.99"), "0.99"),
    "device module kind": (
        "0.26.0",
        "opencl/mlp_dyn.so.gz",
        packed_str(b"opencl"),
        packed_str(b"openXL"),
        "openXL",
    ),
}

CHILD = """
import json, tvm
out = {}
for name, path in json.loads(PATHS).items():
    try:
        tvm.runtime.load_module(path)
        out[name] = None
    except Exception as err:
        out[name] = [type(err).__name__, str(err)]
print("RESULT:" + json.dumps(out))
"""

UNDEFINED_RUNTIME_CALL = r"""
#include <stdint.h>
extern int TVMBackendNoSuchFunction(int);
__attribute__((visibility("default"))) int __tvm_ffi_main(void* self, void* args, int32_t n, void* rv) {
  return TVMBackendNoSuchFunction(n);
}
"""


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("unknown-conventions")
    paths = {}
    for name, (version, file, old, new, _) in EDITS.items():
        path = tmp / (name.replace(" ", "_") + ".so")
        data = release_library(version, file)
        path.write_bytes(edited(data, old, new))
        paths[name] = str(path)
        # The same library unedited, to show the edit is what is refused.
        (tmp / ("original_" + path.name)).write_bytes(data)
        paths["original " + name] = str(tmp / ("original_" + path.name))
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is not None:
        import subprocess

        src = tmp / "undefined_call.c"
        src.write_text(UNDEFINED_RUNTIME_CALL)
        paths["undefined runtime function"] = str(tmp / "undefined_call.so")
        subprocess.run(
            [cc, "-shared", "-fPIC", "-o", paths["undefined runtime function"], str(src)], check=True
        )
    import json

    code = f"PATHS = {json.dumps(json.dumps(paths))}\n" + textwrap.dedent(CHILD)
    # check=True: a signal or an abort fails here, with the child's output.
    return child_result(run_python(code))


@pytest.mark.parametrize("name", list(EDITS))
def test_unknown_convention_is_refused_at_load(refusals, name):
    assert refusals[name] is not None, f"{name}: the edited artifact loaded"
    kind, msg = refusals[name]
    assert EDITS[name][4] in msg, msg
    if name == "device module kind":
        # No backend registers that kind (a missing wheel says the same, with its name).
        assert kind == "RuntimeError" and SUPPORTED in msg, msg
        return
    assert kind == "ValueError", (kind, msg)
    assert SUPPORTED in msg and "Re-export the model" in msg, msg


def test_undefined_runtime_function_is_refused_at_load(refusals):
    if "undefined runtime function" not in refusals:
        pytest.skip("no C compiler to build the library")
    kind, msg = refusals["undefined runtime function"]
    assert kind == "ValueError" and "TVMBackendNoSuchFunction" in msg and SUPPORTED in msg, msg


@pytest.mark.parametrize("name", list(EDITS))
def test_unedited_original_loads(refusals, name):
    assert refusals["original " + name] is None, refusals["original " + name]
