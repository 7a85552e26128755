"""The hand-declared WebGPU subset (src/backends/webgpu/wgpu_api.h) against the real headers.

The backend declares the structs and entry points it uses instead of shipping webgpu.h; a wrong
field order, enumerator value or parameter list there would corrupt memory silently.  The `wgpu`
package ships the webgpu.h / wgpu.h of the wgpu-native it bundles: this test emits a C++ file
including them next to wgpu_api.h and static_asserts every struct's size and field offsets, every
enumerator and flag value, and every entry point's arity and parameter sizes.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

WGPU_API = REPO / "src" / "backends" / "webgpu" / "wgpu_api.h"
NS = "tvm_runtime::webgpu"
# Our structs whose C name differs (one shape shared by several C structs).
ALIASES = {
    "WGPULabelOnlyDescriptor": ["WGPUCommandEncoderDescriptor", "WGPUCommandBufferDescriptor"],
}
TEMPLATE_INSTANCES = {
    "WGPUCallbackInfo<WGPURequestDeviceCallback>": "WGPURequestDeviceCallbackInfo",
    "WGPUCallbackInfo<WGPUBufferMapCallback>": "WGPUBufferMapCallbackInfo",
    "WGPUCallbackInfo<WGPUPopErrorScopeCallback>": "WGPUPopErrorScopeCallbackInfo",
    "WGPUCallbackInfo<WGPUDeviceLostCallback>": "WGPUDeviceLostCallbackInfo",
}


def _headers() -> Path | None:
    spec = importlib.util.find_spec("wgpu")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "resources" / "webgpu.h").exists():
            return Path(location) / "resources"
    return None


HEADERS = _headers()
pytestmark = [
    pytest.mark.skipif(HEADERS is None, reason="the wgpu package (its webgpu.h) is not installed"),
    pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to compile the check"),
]


def _declarations(text: str):
    text = re.sub(r"//[^\n]*", "", text)
    structs = {}
    for name, body in re.findall(r"\nstruct (WGPU\w+) \{(.*?)\n\};", text, re.S):
        fields = [re.findall(r"(\w+)$", " ".join(d.split()))[0] for d in body.split(";") if d.strip()]
        structs[name] = fields
    structs.pop("WGPUCallbackInfo")  # a template: checked through TEMPLATE_INSTANCES
    template_fields = ["nextInChain", "mode", "callback", "userdata1", "userdata2"]
    enums = re.findall(r"\b(WGPU[A-Za-z]+_[A-Za-z0-9]+) = ", text)
    flags = re.findall(r"constexpr WGPUFlags (WGPU\w+) =", text)
    functions = re.findall(r"X\((wgpu\w+),", text)
    return structs, template_fields, enums, flags, functions


def _check_source() -> str:
    structs, template_fields, enums, flags, functions = _declarations(WGPU_API.read_text())
    lines = [
        "#include <cstddef>",
        "#include <webgpu.h>",
        "#include <wgpu.h>",
        '#include "wgpu_api.h"',
        "template <class F> struct Sig;",
        "template <class R, class... A> struct Sig<R (*)(A...)> {",
        "  static constexpr size_t arity = sizeof...(A);",
        "  static constexpr size_t sizes[sizeof...(A) + 1] = {sizeof(A)..., 0};",
        "};",
        "template <class F, class G> constexpr bool SameParams() {",
        "  if (Sig<F>::arity != Sig<G>::arity) return false;",
        "  for (size_t i = 0; i < Sig<F>::arity; ++i)",
        "    if (Sig<F>::sizes[i] != Sig<G>::sizes[i]) return false;",
        "  return true;",
        "}",
    ]

    def same(ours: str, theirs: str, fields: list[str]) -> None:
        lines.append(f'static_assert(sizeof({NS}::{ours}) == sizeof(::{theirs}), "{ours} size");')
        for f in fields:
            lines.append(
                f'static_assert(offsetof({NS}::{ours}, {f}) == offsetof(::{theirs}, {f}), "{ours}.{f}");'
            )

    for name, fields in structs.items():
        for theirs in ALIASES.get(name, [name]):
            same(name, theirs, fields)
    for ours, theirs in TEMPLATE_INSTANCES.items():
        fields = [f for f in template_fields if theirs != "WGPUUncapturedErrorCallbackInfo" or f != "mode"]
        same(ours, theirs, fields)
    for name in enums + flags:
        lines.append(
            f"static_assert(static_cast<uint64_t>({NS}::{name}) == "
            f'static_cast<uint64_t>(::{name}), "{name}");'
        )
    for fn in functions:
        lines.append(
            f'static_assert(SameParams<decltype({NS}::WgpuFunctions::{fn}), decltype(&::{fn})>(), "{fn}");'
        )
    return "\n".join(lines) + "\n", len(structs), len(enums) + len(flags), len(functions)


def test_declarations_match_the_shipped_headers(tmp_path):
    source, n_structs, n_values, n_functions = _check_source()
    assert n_structs >= 20 and n_values >= 30 and n_functions >= 45
    check = tmp_path / "check.cc"
    check.write_text(source)
    proc = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", f"-I{HEADERS}", f"-I{WGPU_API.parent}", str(check)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_wgpu_native_offers_no_pipeline_cache_to_use():
    # The WebGPU backend has no persistent pipeline cache (docs/backends/webgpu.md) because the
    # bundled wgpu-native exposes none through its C API: its wgpu.h names the feature
    # (WGPUNativeFeature_PipelineCache, Vulkan only) but declares no function to create a cache
    # or to fetch its data, and no chained struct passes one to wgpuDeviceCreateComputePipeline.
    # When a wgpu-native release adds them, this fails: wire the cache up, then update the docs.
    text = (HEADERS / "webgpu.h").read_text() + (HEADERS / "wgpu.h").read_text()
    assert "WGPUNativeFeature_PipelineCache" in text
    functions = set(re.findall(r"\b(wgpu\w+)\s*\(", text))
    assert {f for f in functions if "cache" in f.lower()} == set()
    assert not re.search(r"WGPUSType_\w*Cache\w*", text)
