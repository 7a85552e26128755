"""The installed tvm-runtime-webgpu distribution, beyond what tests/conformance checks of every
backend: the wgpu extra and where wgpu-native is looked for."""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

import tvm.backend.webgpu as hook


def test_wgpu_extra_pins_the_c_api_release():
    reqs = md.distribution("tvm-runtime-webgpu").requires or []
    (wgpu,) = [r for r in reqs if r.startswith("wgpu")]
    assert ">=0.32" in wgpu and "<0.33" in wgpu and 'extra == "wgpu"' in wgpu


def test_library_found_where_the_wgpu_package_ships_it():
    candidates = hook.library_candidates()
    try:
        spec_dir = Path(md.distribution("wgpu").locate_file("wgpu/resources"))
    except md.PackageNotFoundError:
        assert candidates == [] or all("wgpu" not in c for c in candidates)
        return
    assert any(Path(c).parent == spec_dir for c in candidates), candidates
