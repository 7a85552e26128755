"""How Disco workers and nodes start, as in apache-tvm 0.27: ProcessSession's workers are
``python -m tvm.exec.disco_worker`` processes started by ``runtime.disco.create_process_pool``
(MLC-LLM registers its own, with its own entry point), so a deploy script needs no
``__main__`` guard; remote nodes are ``python -m tvm.exec.disco_remote_socket_session``; and
both entry modules, which live in the core wheel, name tvm-runtime-extra when it is missing.
A model whose collective functions are missing names what is missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from disco_support import COLLECTIVES

from conftest import run_python


def test_script_without_main_guard(tmp_path):
    """Workers run tvm.exec.disco_worker, never the user's script: the script runs once."""
    marker = tmp_path / "runs.txt"
    script = tmp_path / "deploy.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import numpy as np
            from tvm.runtime import disco
            with open({str(marker)!r}, "a") as f:
                f.write("ran\\n")
            sess = disco.ProcessSession(2)
            x = sess.scatter(np.arange(6, dtype="float32").reshape(2, 3))
            y = sess.empty((3,), "float32")
            sess.allreduce(x, y)
            print("SUM", y.debug_get_from_remote(1).numpy().tolist())
            sess.shutdown()
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "SUM [3.0, 5.0, 7.0]" in proc.stdout
    assert marker.read_text() == "ran\n"


def test_a_registered_process_pool_and_entry_point_are_used(tmp_path):
    """A launcher registered as runtime.disco.create_process_pool (what MLC-LLM does) starts the
    workers with its own entry point, which calls runtime.disco.WorkerProcess."""
    (tmp_path / "my_worker.py").write_text(
        textwrap.dedent(
            """
            import sys
            import tvm, tvm_ffi
            tvm_ffi.register_global_func("my_worker.hello", lambda: "hello from my entry point")
            tvm_ffi.get_global_func("runtime.disco.WorkerProcess")(*(int(a) for a in sys.argv[1:6]))
            """
        )
    )
    out = run_python(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import tvm_ffi
        from tvm.backend.extra.disco import _transport
        from tvm.runtime import disco
        calls = []
        def my_pool(num_workers, num_groups, entrypoint):
            calls.append((num_workers, num_groups, entrypoint))
            return _transport.create_process_pool(num_workers, num_groups, entrypoint)
        tvm_ffi.register_global_func("runtime.disco.create_process_pool", my_pool, override=True)
        sess = disco.ProcessSession(3, entrypoint="my_worker")
        hello = sess.get_global_func("my_worker.hello")()
        print("CALLS", calls)
        print("WORKER2", hello.debug_get_from_remote(2))
        sess.shutdown()
        """,
        env={"PYTHONPATH": str(tmp_path)},
    ).stdout
    assert "CALLS [(3, 1, 'my_worker')]" in out, out
    assert "WORKER2 hello from my entry point" in out, out


@pytest.mark.parametrize(
    ("module", "args"),
    [("tvm.exec.disco_worker", ["1", "2"]), ("tvm.exec.disco_remote_socket_session", ["localhost"])],
)
def test_entry_points_print_their_usage(module, args):
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and f"usage: python -m {module}" in proc.stderr


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("tvm.exec.disco_worker", ["1", "2", "1", "0", "1"]),
        ("tvm.exec.disco_remote_socket_session", ["h", "1", "1"]),
    ],
)
def test_entry_points_name_the_extra_wheel_when_it_is_missing(module, args):
    # As if tvm-runtime-extra were not installed: its hook and package cannot be imported.
    code = (
        "import sys, runpy; sys.modules['tvm.backend.extra'] = None; "
        f"sys.argv = [{module!r}, *{args!r}]; runpy.run_module({module!r}, run_name='__main__')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "tvm-runtime-extra" in proc.stderr and "pip install" in proc.stderr


def test_missing_collective_names_what_is_missing(tmp_path):
    """A model naming a runtime.disco.* function this wheel does not provide fails when its VM is
    created (as apache-tvm's VM resolves its function table), saying that tvm-runtime-extra is
    installed and loaded but lacks it; with the wheel left out, that it is not loaded."""
    payload = COLLECTIVES.read_bytes()
    assert payload.count(b"runtime.disco.allgather") >= 1
    bad = tmp_path / "collectives_newer.so"
    bad.write_bytes(payload.replace(b"runtime.disco.allgather", b"runtime.disco.allgathex"))
    code = f"""
        import tvm
        try:
            tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module({str(bad)!r}), tvm.cpu())
        except Exception as err:
            print("ERROR", err)
        """
    out = run_python(code).stdout
    assert "Cannot find function 'runtime.disco.allgathex'" in out, out
    assert "tvm-runtime-extra" in out and "which is installed and loaded but does not register it" in out, out
    out = run_python(code, env={"TVM_BACKENDS": "opencl"}).stdout
    assert "It is provided by tvm-runtime-extra, which is installed but not loaded" in out, out
    assert "not in TVM_BACKENDS" in out, out


def test_missing_function_of_a_wheel_that_is_not_installed():
    """The core asks the Python side what it knows of the wheel: here, as if the ROCm wheel were
    not installed, a model calling runtime.disco.rccl.* is told to install it."""
    out = run_python(
        f"""
        import tvm, tvm_ffi
        tvm_ffi.register_global_func(
            "tvm_runtime.backend.distribution_status",
            lambda dist: "not installed" if dist == "tvm-runtime-rocm" else "?", override=True)
        data = open({str(COLLECTIVES)!r}, "rb").read()
        data = data.replace(b"runtime.disco.allgather", b"runtime.disco.rccl.allg")
        import tempfile, os
        path = os.path.join(tempfile.mkdtemp(), "m.so")
        open(path, "wb").write(data)
        try:
            tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(path), tvm.cpu())
        except Exception as err:
            print("ERROR", err)
        """
    ).stdout
    assert "Cannot find function 'runtime.disco.rccl.allg'" in out, out
    assert "It is provided by tvm-runtime-rocm, which is not installed: pip install tvm-runtime-rocm" in out
