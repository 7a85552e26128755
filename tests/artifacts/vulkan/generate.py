"""Generate the Vulkan test fixtures: SPIR-V device modules in apache-tvm 0.27's ``vulkan``
format, each inside a host library shaped like a TVM artifact.

The apache-tvm 0.27 wheel cannot emit Vulkan code (no ``target.build.vulkan``), so the kernels are
GLSL compute shaders (``shaders/*.comp``) written to apache-tvm's Vulkan conventions: buffers at
set 0, bindings 0..n-1; scalars in 8-byte slots of the push constants (or of a uniform buffer at
binding n when the kUseUBO flag is set); the workgroup size baked into the shader; the entry
point named after the kernel.  For each case this script

1. compiles the shaders with ``glslc`` and renames their entry point ``main`` to the kernel name;
2. packs them with their FunctionInfo into a ``vulkan`` module payload -> ``<case>.vulkan``;
3. writes C host code that does what apache-tvm's host codegen emits for a GPU target (argument
   checks, ``__tvm_set_device(7, id)``, kernel lookup through the library's imports, packed kernel
   calls ``[buffers..., scalars..., launch dims...]``, workspaces through
   ``TVMBackendAllocWorkspace``), embeds the payload as ``__tvm_ffi__library_bin`` and compiles it
   -> ``<case>.so``, loadable with ``tvm.runtime.load_module``;
4. computes the expected outputs with numpy -> ``<case>.npz``, and lists everything in
   ``manifest.json`` (same schema as ``tests/artifacts/manifest.json``).

Needs at generation time only: ``glslc`` (Debian: glslc), a C compiler, numpy and apache-tvm-ffi
(for its C headers).  Run from any directory:

    python tests/artifacts/vulkan/generate.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import Case, KernelSpec, Scalar, cases  # noqa: E402
from host_code import compile_host, host_source  # noqa: E402
from vulkan_payload import (  # noqa: E402
    DTYPES,
    FLAG_USE_UBO,
    HANDLE,
    Kernel,
    library_bin,
    rename_entry_point,
    spirv_words,
    write_payload,
)

GLSLC_FLAGS = ["-O", "--target-env=vulkan1.1"]  # SPIR-V 1.3, what every Vulkan 1.1 device takes


def compile_shader(spec: KernelSpec, tmp: Path) -> list[int]:
    spv = tmp / (spec.name + ".spv")
    subprocess.run(["glslc", *GLSLC_FLAGS, str(HERE / "shaders" / spec.shader), "-o", str(spv)], check=True)
    return rename_entry_point(spirv_words(spv.read_bytes()), "main", spec.name)


def manifest_entry(case: Case, kernels: list[Kernel]) -> dict:
    calls = []
    for ci, call_ in enumerate(case.calls):
        args = []
        scalars = call_.get("scalars", {})
        for p in case.host.params:
            if isinstance(p, Scalar):
                args.append({"kind": "scalar", "value": scalars[p.name], "dtype": p.dtype})
            elif p.name in call_["inputs"]:
                args.append({"kind": "input", "key": f"{p.name}_{ci}"})
            else:
                expected = call_["outputs"][p.name]
                args.append(
                    {
                        "kind": "output",
                        "key": f"{p.name}_{ci}",
                        "shape": list(expected.shape),
                        "dtype": str(expected.dtype),
                    }
                )
        calls.append({"npz": f"vulkan/{case.name}.npz", "args": args})
    return {
        "name": case.name,
        "target": "vulkan",
        "kind_of_case": "kernel",
        "file": f"vulkan/{case.name}.so",
        "payload": f"vulkan/{case.name}.vulkan",
        "function": case.host.name,
        "calls": calls,
        "rtol": case.rtol,
        "atol": case.atol,
        "description": case.description,
        "needs": case.needs,
        "device_kernels": [
            {
                "name": k.name,
                "arg_types": [list(t) for t in k.arg_types],
                "launch_param_tags": k.tags,
                "flag": k.flag,
                "spirv_words": len(k.words),
            }
            for k in kernels
        ],
        "workspace_bytes": sum(case.host.workspaces.values()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE, help="output directory (default: beside this script)")
    args = ap.parse_args()
    if shutil.which("glslc") is None:
        raise SystemExit("glslc is required (Debian/Ubuntu: apt-get install glslc)")
    args.out.mkdir(parents=True, exist_ok=True)
    glslc_version = subprocess.run(
        ["glslc", "--version"], capture_output=True, text=True
    ).stdout.splitlines()[0]
    entries = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for case in cases():
            kernels = [
                Kernel(
                    k.name,
                    [DTYPES[t] if t != "handle" else HANDLE for t in k.params],
                    compile_shader(k, tmp),
                    k.tags,
                    FLAG_USE_UBO if k.ubo else 0,
                )
                for k in case.kernels
            ]
            payload = write_payload(kernels)
            (args.out / f"{case.name}.vulkan").write_bytes(payload)
            compile_host(host_source(case, library_bin(payload)), args.out / f"{case.name}.so", tmp)
            arrays = {}
            for ci, call_ in enumerate(case.calls):
                arrays.update({f"{k}_{ci}": v for k, v in call_["inputs"].items()})
                arrays.update({f"{k}_{ci}": v for k, v in call_["outputs"].items()})
            np.savez(args.out / f"{case.name}.npz", **arrays)
            entries.append(manifest_entry(case, kernels))
            print(f"{case.name}: {len(payload)} byte payload, kernels {[k.name for k in kernels]}")
    manifest = {
        "generator": "tests/artifacts/vulkan/generate.py",
        "glslc": glslc_version,
        "glslc_flags": GLSLC_FLAGS,
        "cases": entries,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
