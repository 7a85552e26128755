"""What every installed backend wheel must be, whatever the backend: only its namespace portion,
a py3-none wheel, found through its entry point, a DSO that exports the two C entry points and
links nothing but the core and the C/C++ runtime, and no vendor library mapped by importing it
(the driver is opened at first device use, so a machine without it still imports the wheel)."""

from __future__ import annotations

import importlib.metadata as md

import tvm_ffi
from backend_testing.elf import exported_symbols, needed_libraries
from declared import Backend, dso, each_backend, hook

from conftest import child_result, run_module

# What a backend DSO may link besides the core and tvm-ffi: the C and C++ runtimes.
SYSTEM_LIBRARIES = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "ld-linux")
SYSTEM_LIBRARIES += ("libstdc++.so", "libgcc_s.so")


@each_backend()
def test_ships_only_its_namespace_portion(backend: Backend):
    """tvm-runtime-<name> installs tvm/backend/<name>/ and nothing else (the core owns the rest of
    the namespace), and pins the core's ABI series."""
    name = backend.name
    dist = md.distribution(backend.distribution)
    payload = [str(f) for f in dist.files or [] if ".dist-info/" not in str(f)]
    assert f"tvm/backend/{name}/__init__.py" in payload
    assert f"tvm/backend/{name}/libtvm_runtime_{name}.so" in payload
    assert all(f.startswith(f"tvm/backend/{name}/") for f in payload), payload
    assert any(r.startswith("tvm-runtime") and "<0.2" in r for r in dist.requires or [])


@each_backend()
def test_wheel_is_py3_none(backend: Backend):
    """The DSO is opened with ctypes, never as a CPython extension: one wheel per platform."""
    wheel = md.distribution(backend.distribution).read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    assert tags and all(t.startswith("py3-none-") for t in tags), tags


@each_backend()
def test_entry_point_names_the_backend_and_its_devices(backend: Backend):
    """The core discovers the backend through its `tvm.backends` entry point, whose hook declares
    its name, the DSO shipped next to it and device types among those the release train declares."""
    (ep,) = [e for e in md.entry_points(group="tvm.backends") if e.name == backend.name]
    assert ep.value == f"tvm.backend.{backend.name}"
    loaded = ep.load()
    assert loaded is hook(backend)
    assert loaded.BACKEND.name == backend.name
    assert loaded.BACKEND.library == str(dso(backend)) or dso(backend).samefile(loaded.BACKEND.library)
    declared = {tvm_ffi.DLDeviceType[t] for t in backend.device_types}
    served = set(loaded.BACKEND.served_device_types)
    assert served <= declared and bool(served) == bool(declared), (served, declared)


@each_backend()
def test_dso_exports_only_the_c_entry_points(backend: Backend):
    """No C++ symbol crosses the wheel boundary by name: the core finds the backend through these."""
    assert exported_symbols(dso(backend)) == {"TVMRuntimeBackendABIVersion", "TVMRuntimeBackendRegister"}


@each_backend()
def test_dso_links_only_the_core_and_the_c_runtime(backend: Backend):
    needed = needed_libraries(dso(backend))
    assert "libtvm_runtime.so" in needed and "libtvm_ffi.so" in needed, needed
    vendor = [n for n in needed if n.startswith(backend.vendor_libraries)] if backend.vendor_libraries else []
    assert vendor == [], f"links a vendor library it declares: {vendor}"
    other = [n for n in needed if n not in ("libtvm_runtime.so", "libtvm_ffi.so")]
    assert [n for n in other if not n.startswith(SYSTEM_LIBRARIES)] == [], needed


@each_backend(lambda b: bool(b.vendor_libraries))
def test_vendor_library_mapped_only_by_device_use(backend: Backend):
    """Importing the backend maps none of its vendor libraries; the first device use opens the
    driver where this machine has the device."""
    device = ["--device"] if backend.device_types else []
    r = child_result(run_module("children.library_mapping", backend.name, *backend.vendor_libraries, *device))
    assert r["registered"] and r["after_import"] == [], r
    if r.get("exist"):
        assert backend.vendor_libraries[0] in r["after_first_use"], r
