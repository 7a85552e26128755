"""The tvm-runtime-extra wheel (tests/conformance checks what every backend wheel must be): its
global functions and status report, and what a
model that needs it says when it is not loaded."""

from __future__ import annotations

import importlib.metadata as md

from extra_support import CONTRIB

import tvm.backend.extra as hook
from conftest import run_module, run_python

# Runs the llvm sort model and prints what happened (outputs checked elsewhere).
RUN_SORT_MODEL = f"""
import numpy as np, tvm
lib = tvm.runtime.load_module({str(CONTRIB / "sort_ops_f32_cpu.so")!r})
vm = tvm.runtime.vm.VirtualMachine(lib, tvm.cpu(0))
try:
    vm["main"](tvm.runtime.tensor(np.zeros((16, 300), "float32")))
    print("RAN")
except Exception as err:
    print("ERROR", type(err).__name__, err)
"""


def test_registers_every_declared_function():
    import tvm

    for name in hook.GLOBAL_FUNCTIONS:
        assert tvm.get_global_func(name, allow_missing=True) is not None, name


def test_status_report_lists_it_as_loaded():
    out = run_module("tvm.backend")
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("extra "))
    assert "loaded" in line and f"tvm-runtime-extra {md.version('tvm-runtime-extra')}" in line


def test_sort_model_runs_when_allowed():
    out = run_python(RUN_SORT_MODEL, env={"TVM_BACKENDS": "extra"}).stdout
    assert "RAN" in out


def test_missing_contrib_function_names_the_wheel():
    """With the extra wheel left out (allow-list without it), the model's first call fails with
    an error that tells the user which wheel to install, not only the raw lookup failure."""
    out = run_python(RUN_SORT_MODEL, env={"TVM_BACKENDS": "opencl"}).stdout
    assert "ERROR" in out, out
    assert "tvm.contrib.sort." in out, out
    assert "tvm-runtime-extra" in out, out


def test_disco_under_apache_tvm_import_path():
    """`tvm.runtime.disco` (apache-tvm 0.27's path) is the extra wheel's Disco, and a threaded
    session started from it runs a global function on both workers."""
    import tvm
    from tvm.backend.extra import disco

    assert tvm.runtime.disco.ThreadedSession is disco.ThreadedSession
    out = run_python(
        "from tvm.runtime.disco import ThreadedSession\n"
        "sess = ThreadedSession(2)\n"
        "ids = sess.get_global_func('runtime.disco.worker_id')()\n"
        "print('IDS', sorted(ids.debug_get_from_remote(w)[0] for w in range(2)))\n"
        "sess.shutdown()\n"
    ).stdout
    assert "IDS [0, 1]" in out, out


def test_disco_without_the_wheel_names_it():
    out = run_python(
        "import tvm, sys\n"
        "sys.modules['tvm.backend.extra'] = None  # as if tvm-runtime-extra were not installed\n"
        "try:\n"
        "    import tvm.runtime.disco\n"
        "except ImportError as err:\n"
        "    print('ERROR', err)\n"
    ).stdout
    assert "ERROR" in out and 'pip install "tvm-runtime[extra]"' in out, out
