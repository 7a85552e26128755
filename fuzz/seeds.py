"""Seed corpora for the fuzz targets, taken apart from the real apache-tvm 0.27 artifacts.

    python fuzz/seeds.py OUT_DIR     # writes OUT_DIR/<target>/<artifact>.bin

Every seed is a payload exactly as an exported library embeds it (see tvm-0.27-abi.md, section 3),
read with the ELF and library-bin readers the backend tests use (tests/backend_testing/elf.py, payloads.py).
"""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
sys.path.insert(0, str(ROOT / "tests"))
import cache_testing  # noqa: E402
from backend_testing import elf, payloads  # noqa: E402  (the tests' own helpers, found through the line above)

# Target -> module kind whose payloads seed it (None: the whole library-bin container).
MODULE_TARGETS = {
    "vm_executable": "relax.VMExecutable",
    "opencl_module": "opencl",
    "vulkan_module": "vulkan",
    "cuda_module": "cuda",
    "webgpu_module": "webgpu",
    "rocm_module": "hip",
    "dnnl_json_module": "dnnl_json",
    "cublas_json_module": "cublas_json",
    "cudnn_json_module": "cudnn_json",
    "const_loader_module": "const_loader",
}
LIBRARY_BIN_TARGET = "library_bin"
PARAMS_TARGET = "params"
TENSOR_CACHE_TARGET = "tensor_cache"
# fuzz_tensor_cache.cc: the index, then shard i after the i-th separator
TENSOR_CACHE_SEPARATOR = b"\n--tvmrt-shard--\n"
CACHE_ENTRY_TARGET = "cache_entry"
TARGETS = (LIBRARY_BIN_TARGET, PARAMS_TARGET, TENSOR_CACHE_TARGET, CACHE_ENTRY_TARGET, *MODULE_TARGETS)
# The key fuzz/fuzz_cache_entry.cc decodes entries for (CacheKey's description of it).
CACHE_ENTRY_KEY = "kind=fuzz-entry/1\nruntime=0.0.0\ndriver_version=fuzz driver 1.0\n"


def library_bin(data: bytes) -> bytes | None:
    """The container of an exported library without its leading u64 size (None if it has none)."""
    try:
        start, _ = elf.find_symbol(data, payloads.LIBRARY_BIN)
    except KeyError:
        return None
    (nbytes,) = struct.unpack_from("<Q", data, start)
    return data[start + 8 : start + 8 + nbytes]


def write_seeds(out: Path) -> dict[str, int]:
    """Writes every target's seeds; returns how many each got."""
    counts = {target: 0 for target in TARGETS}

    def put(target: str, name: str, blob: bytes) -> None:
        directory = out / target
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{name}.bin").write_bytes(blob)
        counts[target] += 1

    for so in sorted(ARTIFACTS.rglob("*.so")):
        data = so.read_bytes()
        container = library_bin(data)
        if container is None:
            continue
        name = "_".join(so.relative_to(ARTIFACTS).with_suffix("").parts)
        put(LIBRARY_BIN_TARGET, name, container)
        for i, module in enumerate(payloads.read_embedded_modules(data)):
            for target, kind in MODULE_TARGETS.items():
                if module.kind == kind:
                    put(target, f"{name}_{i}", module.payload)
    for blob in sorted((ARTIFACTS / "params").glob("*.bin")):
        put(PARAMS_TARGET, blob.stem, blob.read_bytes())
    for index in sorted(ARTIFACTS.rglob("tensor-cache*.json")):
        put(
            TENSOR_CACHE_TARGET,
            "_".join(index.relative_to(ARTIFACTS).with_suffix("").parts),
            tensor_cache_input(index),
        )
    # Cache entries of the harness's key holding real payloads (an OpenCL source, a SPIR-V
    # module's bytes), and one that is empty.
    for so in [ARTIFACTS / "opencl" / "add.so", ARTIFACTS / "vulkan" / "add.so"]:
        payload = payloads.embedded_modules(so)[0].payload
        put(CACHE_ENTRY_TARGET, so.parent.name, cache_testing.encode_entry(CACHE_ENTRY_KEY, payload))
    put(CACHE_ENTRY_TARGET, "empty", cache_testing.encode_entry(CACHE_ENTRY_KEY, b""))
    return counts


def tensor_cache_input(index: Path) -> bytes:
    """A real tensor cache as one input of fuzz_tensor_cache.cc (its shards renamed by index)."""
    paths = {shard["dataPath"] for shard in json.loads(index.read_text())["records"]}
    by_number = {int(re.fullmatch(r"params_shard_(\d+)\.bin", p).group(1)): p for p in paths}
    assert sorted(by_number) == list(range(len(paths))), f"{index}: shards are not params_shard_0..N"
    shards = [(index.parent / by_number[i]).read_bytes() for i in range(len(paths))]
    return TENSOR_CACHE_SEPARATOR.join([index.read_bytes(), *shards])


if __name__ == "__main__":
    print(write_seeds(Path(sys.argv[1])))
