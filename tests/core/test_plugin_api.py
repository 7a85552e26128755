"""apache-tvm 0.27's backend plugin API on our runtime: out-of-tree plugins written the apache-tvm
way (an entry point naming a callable), ``tvm.backend.loader`` and the public hook API.

The plugins (tests/plugins/tvm_foo, tvm_bad) are installed into a temporary sys.path entry with
their own dist-info; the hook-style plugin is testdev, built out of tree against the installed
core (tests/testdev).
"""

from __future__ import annotations

import importlib.metadata as md
import json
import sys
from pathlib import Path

import pytest

from conftest import run_module, run_python

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins"))
from plugin_site import install_plugin  # noqa: E402

FOO_ENTRY = "[tvm.backends]\ntvm_foo = tvm_foo:_autoload\n"
BAD_ENTRY = "[tvm.backends]\ntvm_bad = tvm_bad:_autoload\n"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("plugins")
    install_plugin(site, "tvm_foo", "tvm-foo", "0.2.0", FOO_ENTRY)
    return site


@pytest.fixture(scope="module")
def bad_plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("bad_plugins")
    install_plugin(site, "tvm_foo", "tvm-foo", "0.2.0", FOO_ENTRY)
    install_plugin(site, "tvm_bad", "tvm-bad", "0.3.0", BAD_ENTRY)
    return site


PLUGIN_PROBE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tvm
import tvm_foo
from tvm.backend.loader import is_loaded
rec = tvm.backend.list_backends().get("tvm_foo")
print(json.dumps({
    "calls": tvm_foo.CALLS,
    "echo": tvm.get_global_func("tvm_foo.echo", allow_missing=True) is not None,
    "is_loaded": is_loaded("tvm_foo"),
    "status": rec and rec.status,
    "protocol": rec and rec.protocol,
    "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)],
}))
"""


def _probe(pythonpath: list[Path], **env: str) -> dict:
    path = ":".join(str(p) for p in pythonpath)
    proc = run_python(PLUGIN_PROBE, env={"PYTHONPATH": path, **env})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_apache_style_plugin_runs_at_import_after_our_hooks(plugin_site, testdev_install):
    out = _probe([plugin_site, testdev_install("normal")])
    # Called exactly once, after our hook backends (testdev) registered.
    assert out["calls"] == [{"testdev_loaded": True}]
    assert out["echo"] is True
    assert out["status"] == "loaded" and out["protocol"] == "callable" and out["is_loaded"] is True
    assert out["warnings"] == []
    # Its detector, registered after testdev's, is the one that answers for ext_dev.
    proc = run_python(
        """
        import tvm
        from tvm.target.detect_target import detect_target_from_device
        assert tvm.get_global_func("tvm_foo.echo")(41) == 41
        print(detect_target_from_device(tvm.ext_dev(0))["kind"])
        """,
        env={"PYTHONPATH": f"{plugin_site}:{testdev_install('normal')}"},
    )
    assert proc.stdout.strip() == "foo"


def test_autoload_off_skips_plugin_until_loaded_by_name(plugin_site):
    out = _probe([plugin_site], TVM_DEVICE_BACKEND_AUTOLOAD="0")
    assert out["calls"] == [] and out["echo"] is False
    assert out["status"] == "disabled" and out["is_loaded"] is False
    proc = run_python(
        """
        import tvm, tvm_foo
        from tvm.backend.loader import is_loaded, load
        load("tvm_foo"); load("tvm_foo")  # idempotent
        assert is_loaded("tvm_foo") and len(tvm_foo.CALLS) == 1
        assert tvm.backend.list_backends()["tvm_foo"].status == "loaded"
        print(tvm.get_global_func("tvm_foo.echo")("hi"))
        """,
        env={"PYTHONPATH": str(plugin_site), "TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert proc.stdout.strip() == "hi"


def test_allow_list_applies_to_plugins(plugin_site):
    out = _probe([plugin_site], TVM_BACKENDS="opencl")
    assert out["status"] == "not-allowed" and out["calls"] == [] and out["echo"] is False
    out = _probe([plugin_site], TVM_BACKENDS="tvm_foo")
    assert out["status"] == "loaded" and len(out["calls"]) == 1 and out["echo"] is True


def test_raising_plugin_is_one_warning_naming_entry_point_and_distribution(bad_plugin_site):
    out = _probe([bad_plugin_site])
    # The good plugin still ran; import survived.
    assert out["status"] == "loaded" and out["echo"] is True
    (msg,) = [w for w in out["warnings"] if "tvm_bad" in w]
    assert "tvm_bad = tvm_bad:_autoload" in msg  # the entry point
    assert "tvm-bad 0.3.0" in msg  # its distribution
    assert "RuntimeError: tvm_bad: simulated plugin initialisation failure" in msg
    assert "TVM_BACKENDS" in msg  # how to get past it


def test_diagnostics_list_plugins(bad_plugin_site):
    env = {"PYTHONPATH": str(bad_plugin_site)}
    proc = run_module(
        "tvm.backend",
        "--json",
        env=env,
    )
    report = {b["name"]: b for b in json.loads(proc.stdout)["backends"]}
    assert report["tvm_foo"]["protocol"] == "callable" and report["tvm_foo"]["status"] == "loaded"
    assert report["tvm_foo"]["entry_point"] == "tvm_foo:_autoload"
    bad = report["tvm_bad"]
    assert bad["status"] == "failed" and bad["distribution"] == "tvm-bad"
    assert "simulated plugin initialisation failure" in bad["reason"]
    text = run_module(
        "tvm.backend",
        env=env,
    ).stdout
    assert "plugin (apache-tvm protocol): tvm_bad = tvm_bad:_autoload" in text
    assert "tvm-bad 0.3.0" in text


def test_plugin_whose_module_is_missing_is_a_warning(tmp_path):
    dist = tmp_path / "tvm_gone-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tvm-gone\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[tvm.backends]\ntvm_gone = tvm_gone_pkg:_autoload\n")
    proc = run_python(
        """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import tvm
        print([str(w.message) for w in caught if "tvm_gone" in str(w.message)])
        """,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert "ModuleNotFoundError" in proc.stdout and "tvm-gone 1.0" in proc.stdout


# ------------------------------------------------------------------------------ loader


def _our_backends() -> list[str]:
    """Entry-point names of the backend wheels installed in this environment."""
    return sorted(
        ep.name
        for ep in md.entry_points(group="tvm.backends")
        if ep.dist is not None and ep.dist.metadata["Name"].startswith("tvm-runtime-")
    )


@pytest.mark.parametrize("name", _our_backends())
def test_loader_loads_each_installed_backend_once(name):
    proc = run_python(
        f"""
        import json, tvm
        from tvm.backend import loader
        registered = tvm.get_global_func("runtime.RegisteredDeviceTypes")
        name = {name!r}
        assert not loader.is_loaded(name)
        before = list(registered())
        loader.load(name)
        assert loader.is_loaded(name)
        hook = __import__("tvm.backend." + name, fromlist=["BACKEND"])
        activations = []
        loader._activate = activations.append
        loader.load(name)  # idempotent: activates nothing again
        hook.register_backend()  # apache-tvm's name goes through the loader too
        assert activations == [], activations
        record = tvm.backend.list_backends()[name]
        assert record.status == "loaded" and record.hook_api == "1.1" and record.deprecation is None
        print(json.dumps({{"before": before, "after": list(registered()),
                          "serves": [int(t) for t in hook.BACKEND.served_device_types]}}))
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    out = json.loads(proc.stdout)
    assert out["before"] == [1]  # only the CPU before load()
    assert sorted(out["after"]) == sorted({1, *out["serves"]})  # the backend's devices after


def test_loader_names_the_wheel_of_a_missing_backend():
    proc = run_python(
        """
        import sys
        class HideCuda:  # as if tvm-runtime-cuda were not installed
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name == "tvm.backend.cuda":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, HideCuda)
        import tvm
        from tvm.backend.loader import is_loaded, load
        for name in ("cuda", "no_such_backend"):
            try:
                load(name)
            except ImportError as err:
                print(repr(str(err)))
            assert not is_loaded(name)
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    cuda, unknown = proc.stdout.strip().splitlines()
    assert "pip install" in cuda and "tvm-runtime-cuda" in cuda
    assert "no_such_backend" in unknown and "tvm-runtime-no_such_backend" in unknown
    assert "third-party" in unknown


def test_loader_matches_apache_tvm_api():
    proc = run_python(
        """
        import inspect
        from tvm.backend.loader import is_loaded, load
        from tvm.backend import loader
        print(loader.__all__, list(inspect.signature(load).parameters),
              list(inspect.signature(is_loaded).parameters))
        """
    )
    assert proc.stdout.strip() == "['is_loaded', 'load'] ['name'] ['name']"


# ---------------------------------------------------------------------------- hook API


def test_hook_api_is_versioned_and_complete():
    proc = run_python(
        """
        import tvm
        from tvm.backend import hook_api
        assert hook_api.HOOK_API_VERSION == (1, 1)
        import tvm_ffi
        assert hook_api.DeviceType is tvm_ffi.DLDeviceType
        for name in hook_api.__all__:
            assert hasattr(hook_api, name), name
        assert hook_api.DeviceAttrKind.EXIST == 0 and hook_api.DeviceAttrKind.L2_CACHE_SIZE_BYTES == 13
        print(sorted(hook_api.__all__))
        """
    )
    names = set(eval(proc.stdout.strip()))  # noqa: S307 - our own child's repr of a list of str
    assert {
        "declare_backend",
        "load_backend_dso",
        "driver_status",
        "require_device",
        "register_device_target_detector",
    } <= names


@pytest.mark.parametrize("name", _our_backends())
def test_our_hooks_use_only_the_public_hook_api(name):
    hook = Path(md.distribution(f"tvm-runtime-{name}").locate_file(f"tvm/backend/{name}/__init__.py"))
    source = hook.read_text(encoding="utf-8")
    assert "tvm.backend._" not in source and "from tvm.backend import _" not in source
    proc = run_python(
        f"""
        import tvm, tvm_ffi
        from tvm.backend import hook_api, {name} as hook
        assert isinstance(hook.BACKEND, hook_api.BackendDeclaration) and hook.BACKEND.name == {name!r}
        assert all(isinstance(t, tvm_ffi.DLDeviceType) for t in hook.BACKEND.served_device_types)
        assert callable(hook.register_backend) and callable(hook.driver_status)  # apache-tvm's names
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok"
