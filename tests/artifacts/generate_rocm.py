"""Generate the apache-tvm 0.27 ROCm test artifacts under ``tests/artifacts/rocm``.

A fixture generator, never a runtime or CI dependency.  It reuses the kernel and model cases of
``generate.py`` (same computations, seeds, inputs and numpy references; the CUDA schedules, since
ROCm binds the same ``blockIdx``/``threadIdx`` axes) and compiles them for
``Target({"kind": "rocm", "mcpu": "gfx90a"}, host="llvm")``: the exported library embeds a device
module of kind ``hip``, format ``hsaco`` (an AMDGPU ELF code object).

apache-tvm's PyPI wheel carries the AMDGPU LLVM backend but no ROCm: it needs the AMD device
libraries (bitcode) and ``ld.lld``.  On Debian 12 both come from the distribution, laid out as a
small ROCm prefix that ``ROCM_PATH`` names (this script builds that prefix itself in a temporary
directory when ``ROCM_PATH`` is not set)::

    apt-get install rocm-device-libs lld-19        # not a CI dependency: fixtures are committed
    mkdir -p PREFIX/amdgcn PREFIX/llvm/bin
    ln -s /usr/lib/x86_64-linux-gnu/amdgcn/bitcode PREFIX/amdgcn/bitcode
    ln -s /usr/bin/ld.lld-19 PREFIX/llvm/bin/ld.lld
    ROCM_PATH=PREFIX PATH=PREFIX/llvm/bin:$PATH \\
        /tmp/venv-tvm027/bin/python tests/artifacts/generate_rocm.py [--out DIR]

Output (deterministic: fixed seeds), beside ``manifest.json`` of the same schema as generate.py's:
``rocm/<kernel>.so`` + ``.npz`` (add, matmul, dyn_muladd, multi_out, row_sum, workspace) and
``rocm/mlp_rocm.so`` + ``rocm/mlp.npz`` (the Relax MLP) for gfx90a (MI200), and the same
kernels and model for gfx942 (MI300, wave64) and gfx1100 (RDNA3, wave32) as
``rocm/<kernel>_<arch>.so`` and ``rocm/mlp_rocm_<arch>.so`` (same ``.npz``), so the tests run
every architecture on the fake HIP and a GPU runs the fixtures of its own.  No AMD GPU is
needed or used: as in generate.py, the unscheduled computation runs on CPU with apache-tvm and is
checked against numpy ("cpu-equivalent").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate as g  # noqa: E402  (the shared cases; imports apache-tvm)
import numpy as np  # noqa: E402
import tvm_ffi  # noqa: E402

import tvm  # noqa: E402
from tvm import s_tir  # noqa: E402

ARCH = "gfx90a"  # MI200: wavefront 64, the default architecture (files without a suffix)
# More architectures, each a full set of kernels and the model under <stem>_<arch>: MI300
# (wave64) and RDNA3 (wave32, also the arch-mismatch fixture add_gfx1100).
OTHER_ARCHS = ("gfx942", "gfx1100")
KERNELS = ("add", "matmul", "dyn_muladd", "multi_out", "row_sum", "workspace")
MODELS = ("mlp",)
DEVICE_TYPE_ROCM = 10


def rocm_target(arch: str = ARCH) -> tvm.target.Target:
    return tvm.target.Target({"kind": "rocm", "mcpu": arch}, host="llvm")


def ensure_rocm_prefix() -> None:
    """Point ROCM_PATH at a prefix with the AMDGPU bitcode and ld.lld (Debian packages)."""
    if os.environ.get("ROCM_PATH"):
        return
    bitcode = next(Path("/usr/lib").glob("*/amdgcn/bitcode"), None)
    lld = shutil.which("ld.lld") or next(
        (shutil.which(f"ld.lld-{v}") for v in range(22, 14, -1) if shutil.which(f"ld.lld-{v}")),
        None,
    )
    if bitcode is None or lld is None:
        sys.exit("error: needs rocm-device-libs and lld (apt-get install rocm-device-libs lld-19)")
    prefix = Path(tempfile.mkdtemp(prefix="rocm-prefix-"))
    (prefix / "amdgcn").mkdir()
    (prefix / "amdgcn" / "bitcode").symlink_to(bitcode)
    (prefix / "llvm" / "bin").mkdir(parents=True)
    (prefix / "llvm" / "bin" / "ld.lld").symlink_to(lld)
    os.environ["ROCM_PATH"] = str(prefix)
    os.environ["PATH"] = f"{prefix / 'llvm' / 'bin'}{os.pathsep}{os.environ['PATH']}"


def hip_kernels(mod: tvm.runtime.Module) -> dict[str, Any]:
    """The kernels of the hip device module, from its AMDGPU assembly (kept in memory only)."""
    for m in g.walk_modules(mod):
        if m.kind == "hip":
            names = re.findall(r"^\s*\.amdhsa_kernel\s+(\w+)", m.inspect_source("asm"), re.M)
            return {"device_module": "hip", "device_kernels": names}
    return {}


def build_kernel(case: g.KernelCase, out: Path, arch: str, stem: str) -> dict[str, Any]:
    sch = s_tir.Schedule(case.func)
    case.schedule["cuda"](sch)
    built = tvm.compile(sch.mod, target=rocm_target(arch))
    rel_so, rel_npz = f"rocm/{stem}.so", f"rocm/{case.name}.npz"
    built.export_library(str(out / rel_so))
    g.save_npz(out / rel_npz, g.merged_arrays(case.calls))
    entry = {
        "name": stem,
        "target": "rocm",
        "arch": arch,
        "kind_of_case": "kernel",
        "file": rel_so,
        "function": case.name,
        "calls": [g.call_json(rel_npz, c, vm=False) for c in case.calls],
        "rtol": case.rtol,
        "atol": case.atol,
        "description": case.description + case.notes.get("cuda", "").replace("CUDA", "GPU"),
        "verified": "cpu-equivalent",
        **g.symbol_info(out / rel_so),
        **hip_kernels(built.mod),
    }
    entry.update({k: v for k, v in g.inspect_built(built.mod).items() if k == "workspace_allocs"})
    print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes")
    return entry


def build_model(case: g.ModelCase, out: Path, arch: str = ARCH) -> dict[str, Any]:
    suffix = "" if arch == ARCH else f"_{arch}"
    rel_npz, rel_so = f"rocm/{case.name}.npz", f"rocm/{case.name}_rocm{suffix}.so"
    g.save_npz(out / rel_npz, g.merged_arrays(case.calls))
    built = tvm.compile(case.mod, target=rocm_target(arch))
    built.export_library(str(out / rel_so))
    print(f"  {rel_so:28s} {(out / rel_so).stat().st_size:8d} bytes")
    return {
        "name": case.name + suffix,
        "target": "rocm",
        "arch": arch,
        "kind_of_case": "vm",
        "file": rel_so,
        "function": "main",
        "output_is_tuple": case.output_is_tuple,
        "calls": [g.call_json(rel_npz, c, vm=True) for c in case.calls],
        "rtol": case.rtol,
        "atol": case.atol,
        "description": case.description,
        "verified": "cpu-equivalent",
        **g.symbol_info(out / rel_so),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="writes OUT/rocm (default: here)")
    ns = parser.parse_args(argv)
    ensure_rocm_prefix()
    out: Path = ns.out.resolve()
    d = out / "rocm"
    d.mkdir(parents=True, exist_ok=True)
    for stale in [*d.glob("*.so"), *d.glob("*.npz")]:
        stale.unlink()
    print(f"apache-tvm {tvm.__version__}, ROCM_PATH={os.environ['ROCM_PATH']}")

    manifest: list[dict[str, Any]] = []
    cases = {c.name: c for c in g.kernel_cases()}
    for name in KERNELS:
        case = cases[name]
        # The unscheduled computation on CPU is the reference (no AMD GPU here).
        ref = tvm.compile(case.func, target=g.make_target("cpu"))
        for call in case.calls:
            g.check(f"{name} (cpu reference)", g.run_kernel_cpu(ref[name], call), call, case.rtol, case.atol)
        manifest.append(build_kernel(case, out, ARCH, name))
    models = [m for m in g.model_cases() if m.name in MODELS]
    for model in models:
        cpu = tvm.compile(model.mod, target=g.make_target("cpu"))
        for call in model.calls:
            got = g.run_vm_cpu(cpu, call, model.output_is_tuple)
            g.check(f"{model.name} (cpu reference)", got, call, model.rtol, model.atol)
        manifest.append(build_model(model, out))
    for arch in OTHER_ARCHS:
        manifest += [build_kernel(cases[name], out, arch, f"{name}_{arch}") for name in KERNELS]
        manifest += [build_model(model, out, arch) for model in models]

    doc = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_rocm.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "numpy_version": np.__version__,
        "paths_relative_to": "the parent of the directory holding this manifest",
        "targets": {"rocm": {"device_type": DEVICE_TYPE_ROCM, "tvm_target": json.loads(str(rocm_target()))}},
        "cases": manifest,
    }
    (d / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    total = sum(p.stat().st_size for p in d.iterdir())
    print(f"wrote {len(manifest)} cases, {total} bytes to {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
