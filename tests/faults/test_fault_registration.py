"""Backends whose registration goes wrong: two distributions claiming one backend or one device
type, duplicate loads of the same DSO, hooks and entry points that raise (including
``sys.exit``).  Each is one clear warning or exception naming what to do; ``import tvm``
survives and the backend that did register keeps serving its device.

Uses the template backend (examples/backend_template, device ext_dev) built against the
installed core, installed with ``pip --target`` (conftest's ``testdev_install``).  Already
covered elsewhere: a DSO whose C registration fails and an ABI mismatch
(tests/core/test_backend_discovery.py), a hook module that cannot be imported (same file), an
apache-tvm style entry point that raises (tests/core/test_plugin_api.py).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from fault_support import probe

# Reports import warnings, backend statuses and whether testdev's device and the CPU still work.
REPORT = """
def report(**extra):
    records = {n: r.status for n, r in tvm.backend.list_backends().items()}
    works = error_of(lambda: np.testing.assert_array_equal(
        tvm.runtime.tensor(np.arange(8, dtype="float32"), tvm.ext_dev(0)).numpy(), np.arange(8)))
    result(warnings=IMPORT_WARNINGS, status=records, works=works is None, cpu=run_add("cpu"), **extra)
"""


def fake_distribution(site: Path, dist: str, version: str, entry_points: str, hooks: dict[str, str]) -> None:
    """A distribution as pip would leave it: dist-info plus hook packages ``tvm/backend/<name>``."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("[tvm.backends]\n" + entry_points)
    for name, code in hooks.items():
        package = site / "tvm" / "backend" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(code)


# A hook of our protocol that registers a copy of testdev's DSO (a second build of the same
# backend, shipped by another distribution).
SECOND_COPY_HOOK = """
import os
from tvm.backend import hook_api
BACKEND = hook_api.declare_backend(
    "{name}",
    library=os.path.join(os.path.dirname(__file__), "libtvm_runtime_testdev.so"),
    device_types=(hook_api.DeviceType.kDLExtDev,),
)
"""


@pytest.fixture(scope="module")
def testdev(testdev_install) -> Path:
    return testdev_install("normal")


def dso_of(site: Path) -> Path:
    return site / "tvm" / "backend" / "testdev" / "libtvm_runtime_testdev.so"


def run_status(*sites: Path) -> dict:
    return probe(REPORT + "report()", env={"PYTHONPATH": ":".join(str(s) for s in sites)})


def test_two_distributions_provide_the_same_backend_name(tmp_path, testdev):
    fork = tmp_path / "fork"
    fake_distribution(
        fork,
        "tvm-runtime-testdev-fork",
        "2.0",
        "testdev = tvm.backend.testdev_fork\n",
        {"testdev_fork": "raise AssertionError('the second provider must not be imported')\n"},
    )
    r = run_status(testdev, fork)
    (msg,) = [w for w in r["warnings"] if "testdev" in w]
    assert "two distributions provide tvm backend 'testdev'" in msg
    assert "tvm-runtime-testdev and tvm-runtime-testdev-fork" in msg and "Uninstall one" in msg
    assert r["status"]["testdev"] == "loaded" and r["works"] and r["cpu"]


def test_two_backends_claim_the_same_device_type(tmp_path, testdev):
    other = tmp_path / "other"
    fake_distribution(
        other,
        "tvm-runtime-testdev-copy",
        "1.0",
        "testdev_copy = tvm.backend.testdev_copy\n",
        {"testdev_copy": SECOND_COPY_HOOK.format(name="testdev_copy")},
    )
    shutil.copy(dso_of(testdev), other / "tvm" / "backend" / "testdev_copy")
    r = run_status(testdev, other)
    (msg,) = [w for w in r["warnings"] if "testdev_copy" in w]
    assert "tvm-runtime-testdev-copy 1.0" in msg
    assert "device type ext_dev is already served by backend 'testdev'" in msg, msg
    assert "second copy of the backend installed" in msg
    assert r["status"] == {**r["status"], "testdev": "loaded", "testdev_copy": "failed"}
    assert r["works"] and r["cpu"], "the backend that registered first keeps its device"


def test_duplicate_loads_of_one_dso(tmp_path, testdev):
    copy = tmp_path / "copy" / "libtvm_runtime_testdev.so"
    copy.parent.mkdir()
    shutil.copy(dso_of(testdev), copy)
    body = f"""
        import _ctypes  # a shared library that is certainly not a backend
        from tvm.backend import hook_api
        from tvm.backend.loader import load
        path = {str(dso_of(testdev))!r}
        first = hook_api.load_backend_dso("testdev", path)
        same = hook_api.load_backend_dso("testdev", path) is first  # idempotent per name
        load("testdev"), load("testdev")  # so is the loader
        report(
            same=same,
            alias=error_of(lambda: hook_api.load_backend_dso("testdev_alias", path)),
            copy=error_of(lambda: hook_api.load_backend_dso("testdev_copy", {str(copy)!r})),
            not_backend=error_of(lambda: hook_api.load_backend_dso("c", _ctypes.__file__)),
            missing=error_of(lambda: hook_api.load_backend_dso("gone", "/nonexistent/libgone.so")),
        )
        """
    r = probe(REPORT + textwrap.dedent(body), env={"PYTHONPATH": str(testdev)})
    assert r["same"] is True
    # The same file under a second name is the same library: its registration already ran once.
    assert r["alias"] is None
    assert r["copy"].startswith("BackendLoadError") and "already served by backend 'testdev'" in r["copy"]
    assert (
        r["not_backend"].startswith("BackendLoadError") and "is not a tvm-runtime backend" in r["not_backend"]
    )
    assert r["missing"].startswith("BackendLoadError") and "is missing (incomplete install)" in r["missing"]
    assert r["works"] and r["cpu"]


@pytest.mark.parametrize(
    "body, reason",
    [
        ("raise RuntimeError('driver blew up')", "RuntimeError: driver blew up"),
        ("import sys; sys.exit(3)", "SystemExit: 3"),
    ],
    ids=["raises", "sys-exit"],
)
def test_hook_whose_registration_raises(tmp_path, testdev, body, reason):
    """The DSO loads (testdev's own file, whose registration already ran), then the hook's
    after_load step raises."""
    site = tmp_path / "site"
    hook = (
        "from tvm.backend import hook_api\n"
        f"def after_load():\n    {body}\n"
        f"BACKEND = hook_api.declare_backend('boom', library={str(dso_of(testdev))!r},\n"
        "                                    after_load=after_load)\n"
    )
    fake_distribution(site, "tvm-runtime-boom", "0.5", "boom = tvm.backend.boom\n", {"boom": hook})
    r = run_status(testdev, site)
    (msg,) = [w for w in r["warnings"] if "boom" in w]
    assert "tvm backend 'boom' (tvm-runtime-boom 0.5) failed to load" in msg and reason in msg, msg
    assert "pip install" in msg
    assert r["status"]["boom"] == "failed" and r["status"]["testdev"] == "loaded"
    assert r["works"] and r["cpu"]


def test_plugin_entry_point_that_exits(tmp_path, testdev):
    site = tmp_path / "site"
    fake_distribution(site, "tvm-exits", "0.1", "tvm_exits = tvm_exits:_autoload\n", {})
    (site / "tvm_exits.py").write_text("def _autoload():\n    raise SystemExit('plugin gave up')\n")
    r = run_status(testdev, site)
    (msg,) = [w for w in r["warnings"] if "tvm_exits" in w]
    assert "SystemExit: plugin gave up" in msg and "TVM_BACKENDS" in msg
    assert r["status"]["tvm_exits"] == "failed" and r["works"] and r["cpu"]
