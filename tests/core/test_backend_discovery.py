"""Backend discovery, the ABI check and failure handling, with the test-only `testdev` backend.

testdev is built in this suite against the installed core (proving the core's CMake package
works) and installed with `pip --target` (a different sys.path entry than the core).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import child_result, run_module, run_python


def tvm_abi() -> str:
    """The installed core's ABI version, e.g. "1.1"."""
    return run_python("import tvm; print(tvm._core.abi_version_str(tvm._core.ABI_VERSION))").stdout.strip()


def _probe(site, **env):
    return child_result(run_module("children.on_testdev", "probe", env={"PYTHONPATH": str(site), **env}))


def test_backend_loads_from_split_install_and_serves_its_device(testdev_install):
    site = testdev_install("normal")
    out = _probe(site)
    assert out["status"]["testdev"] == "loaded"
    assert out["exist"] is True
    assert not [w for w in out["warnings"] if "testdev" in w]
    proc = run_module("children.on_testdev", "device", env={"PYTHONPATH": str(site)})
    assert proc.stdout.strip() == "ok"


def test_workspace_on_backend_device_goes_through_c_table(testdev_install):
    site = testdev_install("normal")
    proc = run_module("children.on_testdev", "workspace", env={"PYTHONPATH": str(site)})
    assert proc.stdout.strip() == "ok"


def test_barrier_semantics(testdev_install):
    site = testdev_install("normal")
    proc = run_module("children.on_testdev", "barrier", env={"PYTHONPATH": str(site), "TVM_NUM_THREADS": "4"})
    assert proc.stdout.strip() == "ok"


def test_autoload_disabled(testdev_install):
    out = _probe(testdev_install("normal"), TVM_DEVICE_BACKEND_AUTOLOAD="0")
    assert out["status"]["testdev"] == "disabled"
    assert out["exist"] is False
    assert all(status == "disabled" for status in out["status"].values())


def test_allow_list(testdev_install):
    site = testdev_install("normal")
    out = _probe(site, TVM_BACKENDS="cuda")
    assert out["status"]["testdev"] == "not-allowed" and out["exist"] is False
    out = _probe(site, TVM_BACKENDS="testdev")
    assert out["status"]["testdev"] == "loaded" and out["exist"] is True


def test_abi_mismatch_is_one_clear_warning(testdev_install):
    out = _probe(testdev_install("abi_mismatch"))
    assert out["status"]["testdev"] == "failed"
    assert out["exist"] is False
    msgs = [w for w in out["warnings"] if "testdev" in w]
    assert len(msgs) == 1
    msg = msgs[0]
    assert "tvm-runtime-testdev 0.1.0" in msg  # distribution and version
    assert "core ABI 99.0" in msg  # the backend's version
    assert f"ABI {tvm_abi()}" in msg  # and the core's
    assert "pip install" in msg  # the fix


def test_registration_failure_is_a_warning_and_later_errors_say_why(testdev_install):
    site = testdev_install("register_fails")
    out = _probe(site)
    assert out["status"]["testdev"] == "failed"
    msgs = [w for w in out["warnings"] if "testdev" in w]
    assert len(msgs) == 1 and "simulated driver initialisation failure" in msgs[0]
    proc = run_module("children.allocation_error", "ext_dev", env={"PYTHONPATH": str(site)})
    assert "failed to load" in proc.stdout and "simulated driver initialisation failure" in proc.stdout


def test_broken_entry_point_never_breaks_import(tmp_path):
    dist = tmp_path / "tvm_runtime_broken-1.2.3.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tvm-runtime-broken\nVersion: 1.2.3\n")
    (dist / "entry_points.txt").write_text("[tvm.backends]\nbroken = tvm.backend.does_not_exist\n")
    out = _probe(tmp_path)
    assert out["status"]["broken"] == "failed"
    (msg,) = [w for w in out["warnings"] if "broken" in w]
    assert "tvm-runtime-broken 1.2.3" in msg and "ModuleNotFoundError" in msg and "pip install" in msg


def test_diagnostics_command_lists_backend(testdev_install):
    site = testdev_install("normal")
    proc = run_module(
        "tvm.backend",
        "--json",
        env={"PYTHONPATH": str(site)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    (entry,) = [b for b in report["backends"] if b["name"] == "testdev"]
    assert entry["status"] == "loaded"
    assert entry["distribution"] == "tvm-runtime-testdev" and entry["version"] == "0.1.0"
    assert entry["abi_version"] == report["core"]["abi_version"]  # built against this core
    assert entry["library"].endswith("libtvm_runtime_testdev.so") and str(site) in entry["library"]
    (types,) = entry["device_types"]
    assert types["name"] == "ext_dev" and len(types["devices"]) == 2
    assert types["devices"][0]["target"]["kind"] == "testdev"
    assert report["core"]["version"] == "0.1.0" and report["conflicts"] == []
    text = run_module(
        "tvm.backend",
        env={"PYTHONPATH": str(site)},
    ).stdout
    assert "testdev" in text and "loaded" in text and "ext_dev:1" in text


def test_diagnostics_reports_foreign_tvm_distribution(tmp_path):
    dist = tmp_path / "apache_tvm-0.27.0.post1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: apache-tvm\nVersion: 0.27.0.post1\n")
    (dist / "top_level.txt").write_text("tvm\n")
    (dist / "RECORD").write_text("tvm/__init__.py,,\n")
    proc = run_module(
        "tvm.backend",
        env={"PYTHONPATH": str(tmp_path)},
        check=False,
    )
    assert proc.returncode == 1
    assert (
        "CONFLICT" in proc.stdout
        and "apache-tvm 0.27.0.post1" in proc.stdout
        and "pip uninstall" in proc.stdout
    )


def test_hook_that_fails_before_import_is_reported_on_its_declared_devices(tmp_path):
    """A hook that cannot even be imported declares no device types; the core's release-train
    table says which devices its distribution serves, so their errors say why."""
    dist = tmp_path / "tvm_runtime_vulkan-9.9.9.dist-info"  # shadows the installed wheel's metadata
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tvm-runtime-vulkan\nVersion: 9.9.9\n")
    (dist / "entry_points.txt").write_text("[tvm.backends]\nvulkan = tvm.backend.vulkan_gone\n")
    proc = run_module("children.allocation_error", "vulkan", "vulkan", env={"PYTHONPATH": str(tmp_path)})
    assert "failed to load" in proc.stdout and "ModuleNotFoundError" in proc.stdout
    assert "tvm-runtime-vulkan==9.9.9" in proc.stdout  # the fix names the distribution


def test_foreign_core_library_is_a_clear_error(tmp_path):
    """apache-tvm installed over tvm-runtime replaces tvm/lib/libtvm_runtime.so with its own
    (a library without our entry points): import and the diagnostics say so, never a traceback
    from ctypes."""
    import _ctypes  # a shared library that is certainly not ours stands in for the foreign one

    import tvm

    package = tmp_path / "tvm"
    shutil.copytree(Path(tvm.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(_ctypes.__file__, package / "lib" / "libtvm_runtime.so")
    env = {"PYTHONPATH": str(tmp_path)}
    proc = run_python(
        """
        try:
            import tvm
        except ImportError as err:
            print(type(err).__name__, err)
        """,
        env=env,
    )
    assert proc.stdout.startswith("CoreLoadError") and "is not tvm-runtime's core library" in proc.stdout
    # apache-tvm's own tvm/__init__.py and tvm/backend/__init__.py import fine; our diagnostics
    # command, left behind in tvm/backend/, must then explain instead of failing with a traceback.
    for init in (package / "__init__.py", package / "backend" / "__init__.py"):
        init.write_text('"""Stands in for apache-tvm\'s file of the same name."""\n')
    proc = run_module(
        "tvm.backend",
        env=env,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "is not tvm-runtime's core library" in proc.stderr and "pip uninstall" in proc.stderr
    assert "Traceback" not in proc.stderr
