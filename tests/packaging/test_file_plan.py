"""The file plan of the backend SDK and of every backend, so that neither drifts.

* The SDK (src/include/tvm_runtime/): `backend.h` is the entry header; every other header lives
  in one tier folder (gpu, vendor, cache, byoc, disco, detail), beside the entry tier's own
  headers, or is a forwarding header of 0.1.x's flat layout (a comment and one include of the
  header it moved to, nothing else) that nothing in the tree includes any more.
* detail/ is promised to no one: only the SDK itself and the core include it.
* Each backend (src/backends/<name>/) follows the file-naming convention of c_api.h 4e:
  register.cc, `<name>_*`, `<vendor>_api.h` with its `<vendor>_library.{h,cc}`,
  `<vendor>_library`, `<vendor>_error`; a subfolder holds one job and its files are named for it
  or by the same rules; anything else is declared below with its reason.  Big backends split by
  job into subfolders (`cuda/nvrtc`, `cuda/byoc`) instead of growing a flat folder.

Pure Python over the source tree: no build, no wheel, well under a second.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parents[2]))
INCLUDE = ROOT / "src" / "include"
SDK = INCLUDE / "tvm_runtime" / "backend"
BACKENDS = ROOT / "src" / "backends"

TIERS = {"gpu", "vendor", "cache", "byoc", "disco", "detail"}
# What every backend needs: backend.h includes exactly these (and c_api.h).
ENTRY = {
    "backend_entry.h",
    "blob_reader.h",
    "device_api_table.h",
    "device_copy.h",
    "error.h",
    "global_function.h",
    "message_text.h",
    "status_codes.h",
}
# Top-level headers that are not in backend.h: used by a few backends only, not a tier of their own.
BESIDE_ENTRY = {"vm_extension.h"}
# The forwarding headers of 0.1.x's flat layout, until 0.3.0 (docs/plugins.md, "SDK headers").
FORWARDING_UNTIL = "0.3.0"
# Flat headers whose content was merged into a tier header of another name.
MERGED = {"vendor_api.h": "vendor/vendor_library.h", "dynamic_library.h": "vendor/vendor_library.h"}

# Per backend: its vendor prefixes (`<vendor>_api.h`, `_library`, `_error`), its subfolders (each
# one job) and every file outside the convention, with why it is named so.
PLAN: dict[str, dict] = {
    "cuda": {
        "vendors": {"cuda", "nvrtc", "cublaslt", "cudnn"},
        "subfolders": {"nvrtc", "byoc"},
        "declared": {
            "cudart_provider.cc": "provides the CUDA runtime an artifact links (c_api.h 4a)",
            "pip_library.h": "opens NVIDIA's libraries from their pip wheels (cuBLASLt, cuDNN, NVRTC)",
            "pip_library.cc": "opens NVIDIA's libraries from their pip wheels (cuBLASLt, cuDNN, NVRTC)",
            "byoc/cublas_json_runtime.cc": "the cublas_json module kind",
            "byoc/cudnn_json_runtime.cc": "the cudnn_json module kind",
            "byoc/vendor_json_runtime.h": "what the two JSON runtimes share",
            "byoc/tf32_policy.h": "the float32 numerics policy of both JSON runtimes",
        },
    },
    "dnnl": {"vendors": {"dnnl"}, "subfolders": set(), "declared": {}},
    "metal": {"vendors": {"objc"}, "subfolders": set(), "declared": {}},
    "opencl": {"vendors": {"cl"}, "subfolders": set(), "declared": {}},
    "rocm": {
        "vendors": {"hip"},
        "subfolders": set(),
        "declared": {
            "code_object.h": "the HIP code-object format",
            "code_object.cc": "the HIP code-object format",
        },
    },
    "vulkan": {
        "vendors": {"vk"},
        "subfolders": set(),
        "declared": {"spirv_info.h": "the SPIR-V format", "spirv_info.cc": "the same"},
    },
    "webgpu": {"vendors": {"wgpu"}, "subfolders": set(), "declared": {}},
}
# A flat folder past this many files is split by job into subfolders.
MAX_FILES_PER_FOLDER = 30

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def _sources(*roots: Path) -> list[Path]:
    return [p for root in roots for p in sorted(root.rglob("*")) if p.suffix in {".h", ".cc", ".c"}]


def _forwarding_target(header: Path) -> str | None:
    """The header a forwarding header includes, or None when `header` is not one."""
    lines = [line for line in header.read_text().splitlines() if line.strip()]
    code = [line for line in lines if not line.lstrip().startswith("//")]
    if len(code) != 1:
        return None
    match = INCLUDE_RE.match(code[0])
    return match[1] if match else None


def _flat_headers() -> list[Path]:
    return sorted(p for p in SDK.glob("*.h"))


def test_backend_h_includes_exactly_the_entry_tier() -> None:
    text = (INCLUDE / "tvm_runtime" / "backend.h").read_text()
    included = set(INCLUDE_RE.findall(text))
    assert included == {f"tvm_runtime/backend/{h}" for h in ENTRY} | {"tvm_runtime/c_api.h"}


def test_sdk_folders_are_the_tiers() -> None:
    folders = {p.name for p in SDK.iterdir() if p.is_dir()}
    assert folders == TIERS, f"tier folders {sorted(folders)}; add a new tier to docs/plugins.md and here"


def test_flat_headers_are_the_entry_tier_or_forwarding() -> None:
    """A flat header is one of the entry tier's, or forwards to a tier header of the same name."""
    for header in _flat_headers():
        if header.name in ENTRY | BESIDE_ENTRY:
            assert _forwarding_target(header) is None, header
            continue
        target = _forwarding_target(header)
        assert target is not None, (
            f"{header.name}: a new SDK header belongs in a tier folder ({sorted(TIERS)})"
        )
        tier, _, name = target.removeprefix("tvm_runtime/backend/").partition("/")
        expected = MERGED.get(header.name, f"{tier}/{header.name}")
        assert tier in TIERS and f"{tier}/{name}" == expected, f"{header.name} forwards to {target}"
        assert (SDK / tier / name).is_file(), target
        assert f"removed in {FORWARDING_UNTIL}" in header.read_text(), header.name


def test_nothing_in_the_tree_includes_a_forwarding_header() -> None:
    forwarding = {f"tvm_runtime/backend/{h.name}" for h in _flat_headers() if _forwarding_target(h)}
    roots = [ROOT / d for d in ("src", "examples", "fuzz", "tests")]
    users = [
        f"{p.relative_to(ROOT)}: {inc}"
        for p in _sources(*roots)
        if p.parent != SDK
        for inc in INCLUDE_RE.findall(p.read_text(errors="replace"))
        if inc in forwarding
    ]
    assert not users, f"include the tier paths instead: {users}"


def test_detail_is_included_only_by_the_sdk_and_the_core() -> None:
    allowed = (SDK, ROOT / "src" / "core", ROOT / "tests" / "cpp")
    users = [
        str(p.relative_to(ROOT))
        for p in _sources(ROOT / "src", ROOT / "examples", ROOT / "fuzz")
        if not any(p.is_relative_to(a) for a in allowed)
        if any(inc.startswith("tvm_runtime/backend/detail/") for inc in INCLUDE_RE.findall(p.read_text()))
    ]
    assert not users, f"backend/detail/ is promised to no one: {users}"


def test_every_backend_has_a_plan() -> None:
    assert {p.name for p in BACKENDS.iterdir() if p.is_dir()} == set(PLAN)


@pytest.mark.parametrize("name", sorted(PLAN))
def test_backend_files_follow_the_convention(name: str) -> None:
    plan = PLAN[name]
    folder = BACKENDS / name
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert "register.cc" in files, f"{name}: register.cc defines the two entry points"
    subfolders = {p.name for p in folder.iterdir() if p.is_dir()}
    assert subfolders == plan["subfolders"], f"{name}: subfolders {sorted(subfolders)}"

    def conventional(rel: str) -> bool:
        path = Path(rel)
        stem = path.name.rsplit(".", 1)[0]
        if path.suffix not in {".h", ".cc"}:
            return False
        sub = path.parent.name if path.parent != Path(".") else None
        prefixes = [f"{name}_"] + ([f"{sub}_"] if sub else [])
        if stem == "register" and sub is None:
            return True
        if any(stem.startswith(p) for p in prefixes):
            return True
        return any(stem in (f"{v}_api", f"{v}_library", f"{v}_error") for v in plan["vendors"])

    unplanned = [f for f in files if not conventional(f) and f not in plan["declared"]]
    assert not unplanned, f"{name}: outside c_api.h 4e's file names and not declared here: {unplanned}"
    stale = [f for f in plan["declared"] if f not in files or conventional(f)]
    assert not stale, f"{name}: declared but absent or conventional after all: {stale}"
    for api in (f for f in files if Path(f).name in {f"{v}_api.h" for v in plan["vendors"]}):
        library = api.replace("_api.h", "_library.h")
        assert library in files, f"{name}: {api} without the {library} that opens it"
    for dir_ in [folder, *(folder / s for s in subfolders)]:
        count = sum(1 for p in dir_.iterdir() if p.is_file())
        assert count <= MAX_FILES_PER_FOLDER, f"{dir_}: {count} files; split it by job into subfolders"
