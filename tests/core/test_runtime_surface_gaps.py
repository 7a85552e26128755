"""The gaps the surface check found, closed: tvm.error and its error kinds, what a "Cannot find
function" error advises, tvm.contrib.tvmjs.load_tensor_cache, tvm.rpc.Server / LocalSession /
query_rpc_tracker as apache-tvm 0.27 has them, and time_evaluator's f_preproc."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

import tvm
from conftest import ARTIFACTS, case, run_python

EXTENSION = """
#include <tvm/ffi/function.h>
#include <stdexcept>
// A C++ extension built against tvm-ffi whose function lets a std::exception escape.
static int Fail(int x) { throw std::runtime_error("extension failed on " + std::to_string(x)); }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fail, Fail);
"""


# ---- tvm.error -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, bases",
    [
        ("InternalError", (RuntimeError,)),
        ("RPCError", (RuntimeError,)),
        ("RPCSessionTimeoutError", (tvm.error.RPCError, TimeoutError)),
        ("OpNotImplemented", (tvm.error.OpError, NotImplementedError)),
        ("OpAttributeInvalid", (tvm.error.OpError, AttributeError)),
        ("DiagnosticError", (RuntimeError,)),
    ],
)
def test_error_kind_arrives_as_its_tvm_error_class(kind, bases):
    raise_error = tvm_ffi.get_global_func("testing.test_raise_error")
    with pytest.raises(getattr(tvm.error, kind)) as info:
        raise_error(kind, "boom")
    assert type(info.value).__bases__ == bases
    assert "boom" in str(info.value)


def test_std_exception_of_a_cpp_extension_is_an_internal_error(tmp_path):
    source = tmp_path / "ext.cc"
    source.write_text(EXTENSION)
    lib = tmp_path / "ext.so"
    includes = [f"-I{p}" for p in tvm_ffi.libinfo.include_paths()]
    libdir = str(Path(tvm_ffi.libinfo.find_libtvm_ffi()).parent)
    subprocess.run(
        ["c++", "-std=c++17", "-O0", "-shared", "-fPIC", *includes, str(source), "-o", str(lib)]
        + [f"-L{libdir}", "-ltvm_ffi", f"-Wl,-rpath,{libdir}"],
        check=True,
    )
    fail = tvm.runtime.load_module(str(lib))["fail"]
    with pytest.raises(tvm.error.InternalError, match="extension failed on 7"):
        fail(7)


def test_rpc_errors_are_tvm_error_classes():
    from tvm.rpc import client

    assert client.RPCError is tvm.error.RPCError
    assert client.RPCSessionTimeoutError is tvm.error.RPCSessionTimeoutError


# ---- what "Cannot find function" says ---------------------------------------------------------

RELAX_RUN_CPU = ARTIFACTS / "relax_run" / "relax_run_cpu.so"
SORT_CPU = ARTIFACTS / "contrib" / "sort_ops_f32_cpu.so"


def missing_function_error(artifact: Path, removed: str, call: str) -> str:
    """The error of running `artifact` in a process where the global `removed` is gone (as in a
    tvm-runtime version without it)."""
    proc = run_python(
        f"""
        import numpy as np, tvm, tvm_ffi
        from tvm.runtime.vm import VirtualMachine
        tvm_ffi.registry.remove_global_func({removed!r})
        try:
            vm = VirtualMachine(tvm.runtime.load_module({str(artifact)!r}), tvm.cpu())
            {call}
        except Exception as err:
            print(type(err).__name__, err)
        """
    )
    return proc.stdout


def test_missing_runtime_function_says_this_version_lacks_it():
    """The issue's case: a model calling relax.run.unique on a runtime without it."""
    out = missing_function_error(RELAX_RUN_CPU, "relax.run.unique", "")
    assert "Cannot find function 'relax.run.unique'" in out
    assert "this version of tvm-runtime does not provide it, so re-exporting does not help" in out
    assert "The artifact lacks this kernel" not in out


def test_function_of_an_installed_wheel_that_lacks_it_says_so():
    """Compiled host code looks tvm.contrib.sort.sort up; tvm-runtime-extra is loaded."""
    out = missing_function_error(
        SORT_CPU, "tvm.contrib.sort.sort", "vm['main'](tvm.runtime.tensor(np.zeros((16, 300), 'float32')))"
    )
    assert "tvm.contrib.sort.sort" in out
    assert "tvm-runtime-extra, which is installed and loaded but does not register it" in out
    assert "pip install -U tvm-runtime-extra" in out


def test_function_the_application_must_register_says_so():
    out = missing_function_error(ARTIFACTS.parent / "vm" / "artifacts" / "misc_cpu.so", "testing.nop", "")
    assert "Cannot find function 'testing.vm.scale2'" in out
    assert "expects the application to register" in out and "tvm.register_global_func" in out


# ---- tvm.contrib.tvmjs ------------------------------------------------------------------------


def test_load_tensor_cache_reads_what_apache_tvm_reads():
    from tvm.contrib import tvmjs

    cache = ARTIFACTS / "tensor_cache"
    expected = np.load(cache / "expected.npz")
    records = json.loads((cache / "expected.json").read_text())
    tensors, metadata = tvmjs.load_tensor_cache(str(cache), tvm.cpu())
    assert metadata == json.loads((cache / "tensor-cache.json").read_text())["metadata"]
    assert sorted(tensors) == sorted(records)
    for name, info in records.items():
        got = tensors[name]
        assert (str(got.dtype), list(got.shape)) == (info["dtype"], info["shape"]), name
        want = expected[info["key"]]  # bfloat16 / float8 as their raw bits
        assert raw_bytes(got) == want.tobytes(), name
    # The json file itself works as the path too.
    again, _ = tvmjs.load_tensor_cache(str(cache / "tensor-cache.json"), tvm.cpu())
    assert raw_bytes(again["mlp.w1"]) == raw_bytes(tensors["mlp.w1"])


def raw_bytes(tensor: tvm.runtime.Tensor) -> bytes:
    """A tensor's bytes (no ml_dtypes needed for bfloat16 / float8)."""
    dtype = tvm_ffi.dtype(str(tensor.dtype))
    out = np.empty((int(np.prod(tensor.shape, dtype=np.int64)) * dtype.bits * dtype.lanes + 7) // 8, np.uint8)
    if out.size:
        tvm.runtime._ffi_api.TVMTensorCopyToBytes(tensor, out.ctypes.data_as(ctypes.c_void_p), out.size)
    return out.tobytes()


# ---- RPC --------------------------------------------------------------------------------------


def test_rpc_server_serves_from_construction_like_apache_tvm():
    from tvm import rpc

    server = rpc.Server("127.0.0.1", 0, 1, key="surface")  # 0.27's positional order
    try:
        sess = rpc.connect("127.0.0.1", server.port, key="surface")
        assert sess.get_function("runtime.NumThreads")() >= 1
        with pytest.raises(tvm.error.RPCError, match="boom"):
            sess.get_function("testing.test_raise_error")("ValueError", "boom")
        assert sess.cpu(0).exist and not sess.ext_dev(0).exist
        with pytest.raises(tvm.error.RPCError, match="upload a shared library"):
            sess.download_linked_module("lib.o")
        sess.close()
    finally:
        server.terminate()


def test_local_session_runs_an_artifact_in_process():
    from tvm import rpc

    c = case("cpu", "tiny_add")
    call = c["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    with rpc.LocalSession() as sess:
        sess.upload(str(ARTIFACTS / c["file"]), "lib.so")
        assert sess.listdir(".") == ["lib.so"]
        assert sess.download("lib.so") == (ARTIFACTS / c["file"]).read_bytes()
        mod, dev = sess.load_module("lib.so"), sess.cpu()
        assert dev == tvm.cpu(0)
        args = [
            tvm.runtime.tensor(data[a["key"]], dev)
            if a["kind"] == "input"
            else tvm.runtime.empty(a["shape"], a["dtype"], dev)
            for a in call["args"]
        ]
        mod[c["function"]](*args)
        np.testing.assert_allclose(
            args[-1].numpy(), data[call["args"][-1]["key"]], rtol=c["rtol"], atol=c["atol"]
        )
        sess.remove("lib.so")
        assert sess.listdir(".") == []


def test_query_rpc_tracker_prints_the_summary():
    from tvm.rpc.tracker import Tracker

    tracker = Tracker("127.0.0.1", 0, 1).start()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tvm.exec.query_rpc_tracker", "--host", "127.0.0.1"]
            + ["--port", str(tracker.port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    finally:
        tracker.terminate()
    assert f"Tracker address 127.0.0.1:{tracker.port}" in proc.stdout
    assert "Queue Status" in proc.stdout


# ---- time_evaluator's f_preproc ---------------------------------------------------------------


def test_time_evaluator_calls_any_registered_preprocessor():
    c = case("cpu", "tiny_add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    args = [
        tvm.runtime.tensor(data[a["key"]])
        if a["kind"] == "input"
        else tvm.runtime.empty(a["shape"], a["dtype"])
        for a in c["calls"][0]["args"]
    ]
    calls = []
    tvm.register_global_func("testing.surface.preproc", lambda *a: calls.append(len(a)), override=True)
    timer = mod.time_evaluator(
        c["function"], tvm.cpu(), number=2, repeat=3, f_preproc="testing.surface.preproc"
    )
    assert len(timer(*args).results) == 3
    assert calls == [len(args)] * 3
    flush = tvm.get_global_func("cache_flush_cpu_non_first_arg")
    flush(*args)  # evicts the inputs; the values stay
    np.testing.assert_array_equal(args[0].numpy(), data[c["calls"][0]["args"][0]["key"]])
    with pytest.raises(ValueError, match="f_preproc 'no.such.fn' is not a registered global function"):
        mod.time_evaluator(c["function"], tvm.cpu(), f_preproc="no.such.fn")
