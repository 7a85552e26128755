"""Compiling the CUDA C++ source of real apache-tvm 0.27 artifacts with NVRTC, without a GPU:
targets, the on-disk cache, header handling and error reporting.

Needs NVRTC (pip install "tvm-runtime-cuda[nvrtc]"); without it these tests skip, except the
ones that check the "NVRTC missing" error itself.
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from backend_testing.elf import elf_section_names
from cache_testing import encode_entry, entries, file_name, parse_entry, with_field
from cuda_support import cuda_payload_of, nvrtc_or_skip, parse_cuda_payload

import tvm
import tvm.backend.cuda as hook
from conftest import ARTIFACTS, MANIFEST, run_python

SOURCES = sorted(
    {c["file"] for c in MANIFEST["cases"] if c["target"] == "cuda"},
)
EM_CUDA = 190


def source_of(file: str) -> tuple[str, list[str]]:
    payload = parse_cuda_payload(cuda_payload_of(ARTIFACTS / file).payload)
    return payload.code.decode(), [k.name for k in payload.kernels.values()]


@pytest.fixture(scope="module")
def nvrtc():
    return nvrtc_or_skip()


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A fresh, empty compile cache for one test."""
    monkeypatch.setenv("TVM_CUDA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVM_CUDA_CACHE_DISABLE", raising=False)
    return tmp_path / "cache"


def test_nvrtc_info(nvrtc):
    assert os.path.isfile(nvrtc["path"])
    major, minor = (int(x) for x in nvrtc["version"].split("."))
    assert major >= 12
    assert nvrtc["supported_archs"] == sorted(nvrtc["supported_archs"]) and 80 in nvrtc["supported_archs"]
    assert nvrtc["found_via"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("file", SOURCES)
def test_compiles_artifact_source_to_cubin(nvrtc, cache, file, arch):
    source, kernels = source_of(file)
    first = hook.compile_source(source, arch)
    assert first["format"] == "cubin" and first["target"] == arch
    image = first["image"]
    assert image[:4] == b"\x7fELF"
    assert struct.unpack_from("<H", image, 0x12)[0] == EM_CUDA
    sections = elf_section_names(image)
    for k in kernels:
        assert f".text.{k}" in sections, (k, sections)
    # As apache-tvm 0.27 compiles it: fast math, every TVM half macro enabled.
    assert "--use_fast_math" in first["options"] and "-default-device" in first["options"]
    assert not first["from_cache"]

    entry = Path(first["cache_file"])
    assert entry.parent == cache / "kernels" and entry.is_file()
    stored = parse_entry(entry.read_bytes())  # the shared entry format, checksum and digest checked
    assert stored.payload == image and entry.name == file_name(stored.description)
    fields = stored.fields
    assert fields["kind"] == "cuda-nvrtc/2" and fields["target"] == arch and fields["format"] == "cubin"
    assert fields["nvrtc"] == nvrtc["version"] and fields["runtime"] == tvm.__version__
    assert fields["source.sha256"] == hashlib.sha256(source.encode()).hexdigest()
    again = hook.compile_source(source, arch)
    assert again["from_cache"] and again["image"] == image and again["cache_file"] == str(entry)
    assert not [p for p in entry.parent.iterdir() if ".tmp." in p.name]


def test_relax_model_sources(nvrtc, cache):
    for file in sorted(str(p.relative_to(ARTIFACTS)) for p in (ARTIFACTS / "relax").glob("*_cuda.so")):
        source, kernels = source_of(file)
        image = hook.compile_source(source, "sm_80")["image"]
        sections = elf_section_names(image)
        assert all(f".text.{k}" in sections for k in kernels), file


def test_cache_disabled(nvrtc, cache, monkeypatch):
    monkeypatch.setenv("TVM_CUDA_CACHE_DISABLE", "1")
    source, _ = source_of("cuda/add.so")
    for _ in range(2):
        out = hook.compile_source(source, "sm_80")
        assert out["cache_file"] == "" and not out["from_cache"]
    assert not (cache / "kernels").exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"garbage",
        lambda data: data[: len(data) - 10],
        lambda data: data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
        lambda data: encode_entry(with_field(parse_entry(data), "nvrtc", "0.0"), parse_entry(data).payload),
    ],
    ids=["foreign", "truncated", "flipped", "other-nvrtc"],
)
def test_damaged_cache_entry_is_recompiled_and_replaced(nvrtc, cache, damage):
    source, _ = source_of("cuda/add.so")
    good = hook.compile_source(source, "sm_80")
    path = Path(good["cache_file"])
    path.write_bytes(damage(path.read_bytes()))
    again = hook.compile_source(source, "sm_80")
    assert not again["from_cache"] and again["image"] == good["image"]
    assert parse_entry(path.read_bytes()).payload == good["image"]
    info = hook_cache_info()
    assert info["rejected"] >= 1 and "rebuilt and replaced" in info["last_problem"]


def hook_cache_info() -> dict:
    return dict(tvm.get_global_func("tvm_runtime.cuda.cache_info")())


def test_cache_is_bounded(nvrtc, cache, monkeypatch):
    sources = [source_of(f)[0] for f in ("cuda/add.so", "cuda/matmul.so", "cuda/row_sum.so")]
    files = [Path(hook.compile_source(s, "sm_80")["cache_file"]) for s in sources]
    for age, path in enumerate(files):
        os.utime(path, (1000 + age, 1000 + age))
    sizes = [p.stat().st_size for p in files]
    cap = sizes[1] + sizes[2] + sizes[0] // 2
    monkeypatch.setenv("TVM_CUDA_CACHE_MAX_SIZE", str(cap))
    newest = Path(hook.compile_source(sources[0], "sm_90")["cache_file"])
    left = list((cache / "kernels").glob("*.entry"))
    # The oldest goes first, the entry just written stays, and the directory fits the cap.
    assert not files[0].exists() and newest in left
    assert sum(p.stat().st_size for p in left) <= cap
    assert hook_cache_info()["evicted"] >= 1


COMPILE_ALL = """
import tvm.backend.cuda as hook
sources = {sources!r}
for source in sources[{start}:] + sources[:{start}]:
    hook.compile_source(source, "sm_80")
"""


def test_concurrent_processes_share_one_cache(nvrtc, cache):
    sources = [source_of(f)[0] for f in ("cuda/add.so", "cuda/matmul.so", "cuda/row_sum.so")]
    env = {**os.environ, "TVM_CUDA_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COMPILE_ALL.format(sources=sources, start=i)],
            env=env,
            cwd="/",
        )
        for i in range(3)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    found = entries(cache / "kernels")
    assert len(found) == 3 and not [p for p in (cache / "kernels").iterdir() if ".tmp." in p.name]
    assert all(hook.compile_source(s, "sm_80")["from_cache"] for s in sources)


def test_cache_key_separates_architectures_and_options(nvrtc, cache, monkeypatch):
    source, _ = source_of("cuda/add.so")
    a = hook.compile_source(source, "sm_80")["cache_file"]
    b = hook.compile_source(source, "sm_90")["cache_file"]
    monkeypatch.setenv("TVM_CUDA_NVRTC_FAST_MATH", "0")
    c = hook.compile_source(source, "sm_80")
    assert "--use_fast_math" not in c["options"]
    monkeypatch.setenv("TVM_CUDA_NVRTC_EXTRA_OPTS", "-lineinfo")
    d = hook.compile_source(source, "sm_80")
    assert d["options"][-1] == "-lineinfo"
    assert len({a, b, c["cache_file"], d["cache_file"]}) == 4


def test_gpu_newer_than_nvrtc_gets_ptx(nvrtc, cache):
    newest = nvrtc["supported_archs"][-1]
    source, kernels = source_of("cuda/matmul.so")
    out = hook.compile_source(source, f"sm_{newest + 100}")
    assert out["format"] == "ptx" and out["target"] == f"compute_{newest}"
    text = out["image"].decode()
    assert ".version" in text and all(f".entry {k}(" in text for k in kernels)


def test_gpu_older_than_nvrtc(nvrtc, cache):
    oldest = nvrtc["supported_archs"][0]
    if oldest <= 50:
        pytest.skip(f"this NVRTC still targets sm_{oldest}")
    source, _ = source_of("cuda/add.so")
    with pytest.raises(RuntimeError, match=f"cannot compile for sm_50: its oldest target is sm_{oldest}"):
        hook.compile_source(source, "sm_50")


def test_bad_arch_string(nvrtc):
    with pytest.raises(ValueError, match="expected an architecture like 'sm_86'"):
        hook.compile_source("", "ampere")


def test_compile_error_shows_nvrtc_log(nvrtc, cache):
    source = 'extern "C" __global__ void broken(float* x) { x[0] = undeclared_thing; }\n'
    with pytest.raises(RuntimeError) as info:
        hook.compile_source(source, "sm_80")
    msg = str(info.value)
    assert "failed to compile this artifact's CUDA source for sm_80" in msg
    assert "NVRTC log:" in msg and "undeclared_thing" in msg
    assert "NVRTC_ERROR_COMPILATION" in msg


SHIM_FALLBACK = """
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
extern "C" __global__ void k(cuda::std::int32_t* x) {
  // is_pointer is not one of the stand-ins: only the real CCCL headers have it.
  x[0] = cuda::std::is_pointer<int*>::value ? 1 : 2;
}
"""


def test_sources_beyond_the_shims_use_real_headers(nvrtc, cache):
    if not (nvrtc["bundled_headers"] or nvrtc["cccl_dirs"]):
        pytest.skip("no CCCL headers: NVRTC < 13.3 without nvidia-cuda-cccl")
    out = hook.compile_source(SHIM_FALLBACK, "sm_80")
    assert ".text.k" in elf_section_names(out["image"])


SPECIAL_VALUES = """
#include <cuda.h>
__device__ const float kInf = INFINITY;
extern "C" __global__ void special(float* x) { x[0] = kInf; x[1] = -INFINITY; x[2] = NAN; }
"""


def test_infinity_nan_and_cuda_h(nvrtc, cache):
    # TVM prints INFINITY/NAN for special constants, and older output includes <cuda.h>.
    out = hook.compile_source(SPECIAL_VALUES, "sm_80")
    assert "--pre-include=tvm_runtime_cuda_prelude.h" in out["options"]
    assert ".text.special" in elf_section_names(out["image"])


def test_fp16_source_finds_cuda_fp16_h(nvrtc, cache):
    source, kernels = source_of("cuda/add_fp16.so")
    assert "cuda_fp16.h" in source
    out = hook.compile_source(source, "sm_90")
    assert f".text.{kernels[0]}" in elf_section_names(out["image"])


def test_bundled_headers_are_unpacked_only_when_needed(nvrtc, cache):
    source, _ = source_of("cuda/add.so")
    hook.compile_source(source, "sm_80")  # the shims are enough: no header files on disk
    assert not (cache / "headers").exists()
    if not nvrtc["bundled_headers"]:
        pytest.skip("this NVRTC bundles no headers")
    hook.compile_source(source_of("cuda/add_fp16.so")[0], "sm_80")  # needs cuda_fp16.h
    (unpacked,) = (cache / "headers").iterdir()
    assert unpacked.name == f"nvrtc-{nvrtc['version']}" and (unpacked / "cuda_fp16.h").is_file()


def test_locator_finds_the_installed_nvrtc(nvrtc):
    found = hook.locate_nvrtc(0)
    if nvrtc["found_via"] in ("TVM_CUDA_NVRTC_PATH", "the system library path"):
        pytest.skip(f"NVRTC comes from {nvrtc['found_via']}, not from the locator")
    assert found and os.path.realpath(found[0]["path"]) == os.path.realpath(nvrtc["path"])


def test_nvrtc_for_a_cuda12_driver(nvrtc, cache):
    """CUDA 12 drivers cannot load CUDA 13 cubins: they get the CUDA 12 NVRTC, or a clear error."""
    try:
        info = hook.nvrtc_info(12)
    except RuntimeError as err:
        msg = str(err)
        assert 'pip install "tvm-runtime-cuda[nvrtc-cu12]"' in msg
        assert "emits code for CUDA 13 drivers, but the installed driver supports CUDA 12" in msg
        pytest.skip("the CUDA 12 NVRTC (tvm-runtime-cuda[nvrtc-cu12]) is not installed")
    assert info["version"].startswith("12.")
    for file in ("cuda/add_fp16.so", "cuda/row_sum.so"):
        source, kernels = source_of(file)
        out = hook.compile_source(source, "sm_70", driver_major=12)  # Volta: CUDA 12 only
        assert out["compiler"].startswith("NVRTC 12.") and out["target"] == "sm_70"
        assert f".text.{kernels[0]}" in elf_section_names(out["image"])
    if info["cccl_dirs"]:
        assert ".text.k" in elf_section_names(
            hook.compile_source(SHIM_FALLBACK, "sm_80", driver_major=12)["image"]
        )


@pytest.mark.parametrize(
    "path, release",
    [
        ("/sp/nvidia/cu13/lib/libnvrtc.so.13", "cu13"),
        ("/sp/nvidia/cu13/include/cccl", "cu13"),
        ("/sp/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "per-component"),
        ("/sp/nvidia/cuda_runtime/include", "per-component"),
        ("/usr/local/cuda/lib64/libnvrtc.so.13", None),
    ],
)
def test_headers_must_come_from_the_same_wheel_release(path, release):
    from tvm.backend.cuda._nvrtc import _wheel_release

    assert _wheel_release(path) == release


def test_missing_nvrtc_names_the_fix():
    proc = run_python(
        """
        import tvm.backend.cuda as hook
        try:
            hook.compile_source('extern "C" __global__ void k() {}', "sm_80")
        except RuntimeError as err:
            print("RAISED", str(err).replace(chr(10), " "))
        """,
        env={"TVM_CUDA_NVRTC_PATH": "/nonexistent/libnvrtc.so.13"},
    )
    out = proc.stdout
    assert "RAISED" in out and "no usable NVRTC was found" in out
    assert 'pip install "tvm-runtime-cuda[nvrtc]"' in out and "TVM_CUDA_NVRTC_PATH" in out
    assert "/nonexistent/libnvrtc.so.13" in out


def test_source_error_is_not_reported_as_a_missing_header(tmp_path):
    """An NVRTC without the CCCL headers (as the H200 machine's NVRTC 13.0): the first attempt, on
    tvm-runtime's stand-in headers, fails on the source's own error; the retry with the real
    headers cannot open them.  What is reported is the source's error, not "a header is missing"
    (the CUDA 12 NVRTC named by TVM_CUDA_NVRTC_PATH alone comes with no header directories)."""
    try:
        info = hook.nvrtc_info(12)
    except RuntimeError:
        pytest.skip("the CUDA 12 NVRTC (tvm-runtime-cuda[nvrtc-cu12]) is not installed")
    source, _ = source_of("cuda/add.so")
    assert "cuda/std/cstdint" in source and "  int cse_v1 = " in source
    broken = source.replace("  int cse_v1 = ", "  bad cse_v1 = ", 1)
    proc = run_python(
        f"""
        import tvm.backend.cuda as hook
        try:
            hook.compile_source({broken!r}, "sm_80", driver_major=12, use_cache=False)
        except RuntimeError as err:
            print("ERROR:", err)
        """,
        env={"TVM_CUDA_NVRTC_PATH": info["path"], "TVM_CUDA_NVRTC_INCLUDE_DIRS": str(tmp_path)},
    )
    assert "ERROR:" in proc.stdout and "NVRTC_ERROR_COMPILATION" in proc.stdout, proc.stdout
    assert "bad" in proc.stdout.split("NVRTC log:")[1], proc.stdout  # the typo, in NVRTC's words
    assert "A CUDA header is missing" not in proc.stdout, proc.stdout
    assert "could not read them" in proc.stdout, proc.stdout
