"""The hook protocol: a hook declares its backend (hook API 1.1) and the loader does the rest;
hooks written for hook API 1.0 keep working with a DeprecationWarning saying what to change;
a declaration that is wrong is one clear warning naming the mistake, never a broken import.

Out-of-tree hooks are fake distributions (dist-info + ``tvm/backend/<name>/__init__.py``) in a
temporary sys.path entry, around a copy of the template backend's DSO (testdev, ext_dev).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_module, run_python

# A hook of the template's old form: register(), DEVICE_TYPES and a detect_target attribute
# that the loader registers for every kind in DEVICE_TYPES.
LEGACY_REGISTER = """
import os
from tvm.backend import hook_api
DEVICE_TYPES = (hook_api.DeviceType.kDLExtDev,)
def register():
    hook_api.load_backend_dso("legacy", os.path.join(os.path.dirname(__file__), "libtvm_runtime_testdev.so"))
def detect_target(dev):
    return {"kind": "legacy"}
"""

# The other 1.0 form: register_backend() registers its detector itself.
LEGACY_REGISTER_BACKEND = """
import os
from tvm.backend import hook_api
DEVICE_TYPES = (hook_api.DeviceType.kDLExtDev,)
def register_backend():
    hook_api.load_backend_dso("legacy", os.path.join(os.path.dirname(__file__), "libtvm_runtime_testdev.so"))
    hook_api.register_device_target_detector("ext_dev", lambda dev: {"kind": "own-detector"})
"""

# Declared (hook API 1.1) next to the legacy hook: the same DSO under its own name (its
# registration ran once already), no device of its own, diagnostics for the report.
DECLARED = """
import os
from tvm.backend import hook_api
BACKEND = hook_api.declare_backend(
    "declared",
    library=os.path.join(os.path.dirname(__file__), "..", "legacy", "libtvm_runtime_testdev.so"),
    diagnostics=lambda: {"driver": "none needed"},
)
"""

BROKEN = {
    "notdecl": "BACKEND = 42\n",
    "misnamed": (
        "from tvm.backend import hook_api\nBACKEND = hook_api.declare_backend('other', library='x.so')\n"
    ),
    "badtype": (
        "from tvm.backend import hook_api\n"
        "BACKEND = hook_api.declare_backend('badtype', library='x.so', device_types=('opencl',))\n"
    ),
    "empty": "SOMETHING_ELSE = 1\n",
}

PROBE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tvm
from tvm.target.detect_target import detect_target_from_device
records = tvm.backend.list_backends()
print(json.dumps({
    "status": {n: r.status for n, r in records.items()},
    "reason": {n: r.reason for n, r in records.items()},
    "hook_api": {n: r.hook_api for n, r in records.items()},
    "warnings": [[w.category.__name__, str(w.message), w.filename] for w in caught],
    "target": detect_target_from_device(tvm.ext_dev(0)),
}))
"""


def _site(root: Path, testdev: Path, hooks: dict[str, str]) -> Path:
    """One distribution per hook, as pip would leave it; the `legacy` hook gets testdev's DSO."""
    for name, code in hooks.items():
        info = root / f"tvm_runtime_{name}-0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: tvm-runtime-{name}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[tvm.backends]\n{name} = tvm.backend.{name}\n")
        package = root / "tvm" / "backend" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(code)
    dso = testdev / "tvm" / "backend" / "testdev" / "libtvm_runtime_testdev.so"
    shutil.copy(dso, root / "tvm" / "backend" / "legacy")
    return root


def _probe(site: Path) -> dict:
    proc = run_python(PROBE, env={"PYTHONPATH": str(site)})
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def legacy_site(tmp_path_factory: pytest.TempPathFactory, testdev_install) -> Path:
    root = tmp_path_factory.mktemp("hooks")
    return _site(root, testdev_install("normal"), {"legacy": LEGACY_REGISTER, "declared": DECLARED, **BROKEN})


def test_hook_api_1_0_keeps_working_with_a_deprecation_warning(legacy_site):
    out = _probe(legacy_site)
    assert out["status"]["legacy"] == "loaded" and out["hook_api"]["legacy"] == "1.0"
    assert out["target"] == {"kind": "legacy"}  # detect_target registered for DEVICE_TYPES
    (deprecation,) = [w for w in out["warnings"] if w[0] == "DeprecationWarning"]
    _, message, filename = deprecation
    assert "written for hook API 1.0 (register(), DEVICE_TYPES, detect_target)" in message
    assert "tvm backend hook tvm.backend.legacy is" in message
    declaration = (
        "BACKEND = hook_api.declare_backend('legacy', device_types=DEVICE_TYPES, detect_target=detect_target)"
    )
    assert declaration in message and "unless it is libtvm_runtime_legacy.so beside the hook" in message
    assert filename.endswith("tvm/backend/legacy/__init__.py")  # points at the hook to change
    assert not [w for w in out["warnings"] if "legacy" in w[1] and w[0] == "RuntimeWarning"]


def test_declaration_mistakes_are_one_clear_warning_each(legacy_site):
    out = _probe(legacy_site)
    assert out["status"]["declared"] == "loaded" and out["hook_api"]["declared"] == "1.1"
    expected = {
        "notdecl": "TypeError: tvm.backend.notdecl.BACKEND must be built by tvm.backend.hook_api.declare_",
        "misnamed": "entry point 'misnamed' names tvm.backend.misnamed, which declares backend 'other'",
        "badtype": "ValueError: device_types: 'opencl' is not a device type",
        "empty": "AttributeError: backend hook tvm.backend.empty declares nothing: define BACKEND = ",
    }
    for name, reason in expected.items():
        assert out["status"][name] == "failed", name
        assert reason in out["reason"][name], out["reason"][name]
        (warning,) = [w for w in out["warnings"] if f"'{name}'" in w[1]]
        assert warning[0] == "RuntimeWarning" and reason in warning[1] and "pip install" in warning[1]
    assert out["status"]["legacy"] == "loaded", "the mistakes of others do not stop a backend"


def test_diagnostics_show_protocol_deprecation_and_declared_diagnostics(legacy_site):
    proc = run_module(
        "tvm.backend",
        "--json",
        env={"PYTHONPATH": str(legacy_site)},
    )
    report = {b["name"]: b for b in json.loads(proc.stdout)["backends"]}
    assert report["legacy"]["hook_api"] == "1.0" and "declare_backend" in report["legacy"]["deprecation"]
    assert report["legacy"]["library"].endswith("legacy/libtvm_runtime_testdev.so")
    assert report["declared"]["diagnostics"] == {"driver": "none needed"}
    assert "deprecation" not in report["declared"]
    text = run_module(
        "tvm.backend",
        env={"PYTHONPATH": str(legacy_site)},
    ).stdout
    assert "deprecated: tvm backend hook tvm.backend.legacy is written for hook API 1.0" in text


def test_hook_api_1_0_register_backend_keeps_its_own_detector(tmp_path, testdev_install):
    site = _site(tmp_path, testdev_install("normal"), {"legacy": LEGACY_REGISTER_BACKEND})
    out = _probe(site)
    assert out["status"]["legacy"] == "loaded" and out["target"] == {"kind": "own-detector"}
    (deprecation,) = [w for w in out["warnings"] if w[0] == "DeprecationWarning"]
    assert "(register_backend(), DEVICE_TYPES)" in deprecation[1]
