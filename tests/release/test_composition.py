"""The wheels composed across environments (issue 9, item 5).

* the core in a venv and a backend in another sys.path entry: ``pip --target`` + PYTHONPATH, and
  ``pip --user`` with PYTHONUSERBASE;
* a venv with ``--system-site-packages`` over a base prefix that has apache-tvm-ffi (every Env of
  release_support is one: the conda-base + pip-venv pattern), checked explicitly here;
* vendor libraries from ``$CONDA_PREFIX/lib`` before the system's, with TVM_OPENCL_LIBRARY /
  TVM_VULKAN_LIBRARY still first (which file was opened is read from /proc/self/maps).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import release_support as rs

RUN_ALL = ("run:cpu", "run:opencl", "run:vulkan")


@pytest.fixture(scope="module")
def train(tmp_path_factory: pytest.TempPathFactory) -> rs.Train:
    return rs.train(tmp_path_factory)


@pytest.fixture(scope="module")
def full_env(tmp_path_factory, train) -> rs.Env:
    env = rs.new_env(tmp_path_factory, "composition-full")
    env.install(train.wheel(rs.CORE), *(train.wheel(f"{rs.CORE}-{b}") for b in rs.BACKENDS))
    return env


def test_core_in_venv_tvm_ffi_from_base_prefix(tmp_path_factory, full_env):
    report = full_env.probe(*RUN_ALL)
    prefix = rs.base_prefix(tmp_path_factory)
    assert Path(report["tvm_ffi_file"]).is_relative_to(prefix.site), report["tvm_ffi_file"]
    assert Path(report["tvm_file"]).is_relative_to(full_env.path), report["tvm_file"]
    for action in RUN_ALL:
        assert rs.require_ran(report, action) == "ok", report["results"]
    assert report["warnings"] == []


def test_backend_in_pip_target_dir(tmp_path_factory, train):
    env = rs.new_env(tmp_path_factory, "composition-target")
    env.install(train.wheel(rs.CORE))
    target = env.path.parent / "composition-target-dir"
    env.pip("install", "--quiet", "--no-deps", "--target", str(target), str(train.wheel(f"{rs.CORE}-opencl")))
    report = env.probe("run:opencl", "import:tvm.backend.opencl", env={"PYTHONPATH": str(target)})
    assert report["backends"]["opencl"]["status"] == "loaded", report["backends"]
    assert Path(report["tvm_file"]).is_relative_to(env.path)
    assert rs.require_ran(report, "run:opencl") == "ok"
    # Without the extra sys.path entry the backend is simply not there.
    assert "opencl" not in env.probe()["backends"]


def test_backend_in_user_site(tmp_path_factory, train):
    env = rs.new_env(tmp_path_factory, "composition-user")
    env.install(train.wheel(rs.CORE))
    user_base = {"PYTHONUSERBASE": str(env.path.parent / "composition-user-base")}
    env.pip("install", "--quiet", "--no-deps", "--user", str(train.wheel(f"{rs.CORE}-vulkan")), env=user_base)
    report = env.probe("run:vulkan", env=user_base)
    assert report["backends"]["vulkan"]["status"] == "loaded", report["backends"]
    assert rs.require_ran(report, "run:vulkan") == "ok"


def _opened(report: dict, soname_prefix: str) -> list[str]:
    return [p for p in report["vendor_libraries"] if os.path.basename(p).startswith(soname_prefix)]


def test_vendor_libraries_from_conda_prefix_then_overrides(tmp_path_factory, full_env):
    system = full_env.probe("run:opencl", "run:vulkan")
    for action in ("run:opencl", "run:vulkan"):
        rs.require_ran(system, action)
    (system_ocl,) = _opened(system, "libOpenCL.so")
    (system_vk,) = _opened(system, "libvulkan.so")

    # A conda environment ships its own ICD loader and Vulkan loader in $CONDA_PREFIX/lib.
    # Copies (not links: /proc/self/maps shows a link's target) with the names the backends open.
    conda = full_env.path.parent / "fake-conda-prefix"
    (conda / "lib").mkdir(parents=True, exist_ok=True)
    shutil.copy2(system_ocl, conda / "lib" / "libOpenCL.so.1")
    shutil.copy2(system_vk, conda / "lib" / "libvulkan.so.1")

    in_conda = full_env.probe("run:opencl", "run:vulkan", env={"CONDA_PREFIX": str(conda)})
    assert in_conda["results"] == {"run:opencl": "ok", "run:vulkan": "ok"}, in_conda["results"]
    assert _opened(in_conda, "libOpenCL.so") == [str(conda / "lib" / "libOpenCL.so.1")]
    assert _opened(in_conda, "libvulkan.so") == [str(conda / "lib" / "libvulkan.so.1")]

    overrides = {
        "CONDA_PREFIX": str(conda),
        "TVM_OPENCL_LIBRARY": system_ocl,
        "TVM_VULKAN_LIBRARY": system_vk,
    }
    overridden = full_env.probe("run:opencl", "run:vulkan", env=overrides)
    assert overridden["results"] == {"run:opencl": "ok", "run:vulkan": "ok"}, overridden["results"]
    assert _opened(overridden, "libOpenCL.so") == [system_ocl]
    assert _opened(overridden, "libvulkan.so") == [system_vk]
