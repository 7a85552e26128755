"""Helpers for the Vulkan backend tests: the device fixture, the fixture manifest, and loading
(or crafting) ``vulkan`` module payloads the way a TVM artifact's import tree does.

Fixtures live in tests/artifacts/vulkan (see its generate.py): for every case a host library
``<case>.so`` shaped like an apache-tvm artifact, the raw module payload ``<case>.vulkan`` and the
numpy results ``<case>.npz``.
"""

from __future__ import annotations

import json
import sys

import tvm_ffi
from backend_testing.devices import device_or_skip

from conftest import ARTIFACTS

VULKAN = 7
VK_ARTIFACTS = ARTIFACTS / "vulkan"
MANIFEST = json.loads((VK_ARTIFACTS / "manifest.json").read_text())
LOADER = "ffi.Module.load_from_bytes.vulkan"

sys.path.insert(0, str(VK_ARTIFACTS))
import vulkan_payload  # noqa: E402,F401  (re-exported for the tests)


def vulkan_device(tvm):
    """tvm.vulkan(0), or a skip with the driver's reason (a failure when Vulkan is required)."""
    return device_or_skip(tvm, tvm.vulkan(0), VULKAN, "Vulkan")


def target_property(dev, key):
    return tvm_ffi.get_global_func("device_api.vulkan.get_target_property")(dev, key)


def missing_features(case, dev) -> list[str]:
    """The target properties a fixture case needs that the device lacks."""
    return [p for p in case.get("needs", []) if not target_property(dev, p)]


def vk_cases() -> list[dict]:
    return MANIFEST["cases"]


def vk_case(name: str) -> dict:
    (c,) = [c for c in MANIFEST["cases"] if c["name"] == name]
    return c


def payload_of(name: str) -> bytes:
    return (VK_ARTIFACTS / f"{name}.vulkan").read_bytes()


def kernels_of(name: str):
    """The vulkan_payload.Kernel list of a fixture module (to rebuild or corrupt it)."""
    return vulkan_payload.read_payload(payload_of(name))[1]


def load_payload(payload: bytes):
    """The module tvm-ffi's library loader would import for this payload."""
    return tvm_ffi.get_global_func(LOADER)(payload)


def load_kernels(kernels, **kwargs):
    return load_payload(vulkan_payload.write_payload(kernels, **kwargs))
