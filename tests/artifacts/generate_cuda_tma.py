"""Generate ``tests/artifacts/cuda_tma``: a Hopper TMA kernel compiled by apache-tvm 0.27.

A fixture generator like ``generate.py`` (run it with a Python that has
``apache-tvm==0.27.0.post1``; never a runtime dependency)::

    /work/venvs/tvm027/bin/python tests/artifacts/generate_cuda_tma.py [--out DIR]

The kernel ``tma_scale`` (B = A * 2 + 1 on a 64x96 float32 matrix) is written in TIRx script with
0.27's tile primitive ``Tx.copy_async(..., dispatch="tma_explicit")``: each 32x32 tile of A is
loaded into shared memory by ``cp.async.bulk.tensor`` (one elected thread, completion on an
mbarrier), then every thread of the block writes its part of B.  Compiled for
``{"kind": "cuda", "arch": "sm_90a"}`` with ``tir_pipeline="tirx"``, the host code encodes the
descriptor of A with the packed global ``runtime.cuTensorMapEncodeTiled`` before the launch, and
the kernel takes it by value (``const __grid_constant__ CUtensorMap``; its FunctionInfo tags the
parameter with arg_extra_tags = kTensorMap).

The compile runs in a child process, so a compiler crash (gpu-run-notes.md records apache-tvm
0.27 segfaulting on sm_90 Relax builds on a CPU-only machine) shows as a signal with its output
instead of killing the generator.  The generator asserts that the host code calls
``runtime.cuTensorMapEncodeTiled`` and records the encode's arguments as the compiler lowered them
(``tirx.tensormap_encode_tiled``) in ``manifest.json``, with numpy inputs and expectations in
``tma_scale.npz``.  The CUDA source (fmt ``cuda``) is compiled by NVRTC when loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROWS, COLS, TILE, THREADS = 64, 96, 32, 128
KERNEL_SOURCE = f"""
@T.prim_func
def tma_scale(A_ptr: T.handle, B_ptr: T.handle):
    A = T.match_buffer(A_ptr, ({ROWS}, {COLS}), "float32")
    B = T.match_buffer(B_ptr, ({ROWS}, {COLS}), "float32")
    T.device_entry()
    bx, by = T.cta_id([{COLS // TILE}, {ROWS // TILE}])
    tid = T.thread_id([{THREADS}])
    # One 32x32 float32 tile (4 KiB) and, after it, the mbarrier the TMA completes on.
    dyn = T.alloc_buffer(({TILE * TILE // 2 + 8},), "uint64", scope="shared.dyn")
    T.attr({{"tirx.dyn_smem_bytes": {(TILE * TILE // 2 + 8) * 8}}})
    A_smem = T.decl_buffer(({TILE}, {TILE}), "float32", dyn.data, layout=T.TileLayout(T.S[{TILE}, {TILE}]))
    mbar = T.decl_buffer((1,), "uint64", dyn.data, elem_offset={TILE * TILE // 2})
    if tid == 0:
        T.ptx.mbarrier.init.shared.b64(mbar.ptr_to([0]), T.uint32(1))
        T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tid == 0:
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar.ptr_to([0]), T.uint32({TILE * TILE * 4}))
        Tx.copy_async(
            A_smem[:, :],
            A[by * {TILE} : by * {TILE} + {TILE}, bx * {TILE} : bx * {TILE} + {TILE}],
            dispatch="tma_explicit",
            mbar=mbar.ptr_to([0]),
        )
    T.cuda.mbarrier_wait(mbar.ptr_to([0]), 0)
    for i in T.serial({TILE * TILE // THREADS}):
        r: T.let = i * {THREADS // TILE} + tid // {TILE}
        c: T.let = tid % {TILE}
        B[by * {TILE} + r, bx * {TILE} + c] = A_smem[r, c] * T.float32(2) + T.float32(1)
"""


def compile_in_this_process(out: Path) -> None:
    """Child: compile, export, and describe what the compiler made (JSON on stdout)."""
    import tvm
    from tvm.script import tirx as T  # noqa: N812  (TVMScript's own names)
    from tvm.script.tirx import tile as Tx  # noqa: N812

    func = tvm.script.from_source(KERNEL_SOURCE, {"T": T, "Tx": Tx})
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    mod = tvm.IRModule({"main": func})
    with target:
        lowered = tvm.tirx.transform.LowerTIRx()(mod)
        executable = tvm.compile(mod, target=target, tir_pipeline="tirx")
    # The encode as the compiler lowered it, read from the printed TIRx (0.27's Python API has no
    # statement visitor): T.tensormap_encode_tiled(map, base, ints..., descriptor_dtype=..., ...)
    encodes = re.findall(r"T\.tensormap_encode_tiled\((.*)\)", lowered.script())
    assert len(encodes) == 1, f"expected one tensormap_encode_tiled, found {len(encodes)}"
    positional = [a.strip() for a in encodes[0].split(",") if "=" not in a]
    keywords = dict(re.findall(r"(\w+)=([^,]+)", encodes[0]))
    rank = int(keywords["rank"])
    ints = [int(a) for a in positional[-4 * rank + 1 :]]
    attrs = {k: v.strip().strip('"') for k, v in keywords.items()}
    host = executable.mod
    host_ir = host.inspect_source("ll")
    assert "runtime.cuTensorMapEncodeTiled" in host_ir, "host code does not call the encode global"
    (cuda,) = [m for m in host.imports if m.kind == "cuda"]
    source = cuda.inspect_source()
    assert "__grid_constant__ CUtensorMap" in source, "kernel does not take the map by value"
    assert "cp_async_bulk_tensor" in source, "kernel does not use cp.async.bulk.tensor"
    executable.export_library(str(out / "tma_scale.so"))
    info = {
        "tvm_version": tvm.__version__,
        "encode": {
            "dtype": attrs["descriptor_dtype"],
            "rank": rank,
            "global_dims": ints[:rank],
            "global_strides": ints[rank : 2 * rank - 1],
            "box_dims": ints[2 * rank - 1 : 3 * rank - 1],
            "element_strides": ints[3 * rank - 1 : 4 * rank - 1],
            "interleave": int(attrs["interleave"]),
            "swizzle": int(attrs["swizzle"]),
            "l2_promotion": int(attrs["l2_promotion"]),
            "oob_fill": int(attrs["oob_fill"]),
            "force_cu_dtype": int(attrs["force_cu_dtype"]),
        },
        "kernel_declaration": next(ln for ln in source.splitlines() if "__global__" in ln),
    }
    print("INFO:" + json.dumps(info))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "cuda_tma")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.child:
        compile_in_this_process(out)
        return 0

    proc = subprocess.run(
        [sys.executable, __file__, "--child", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )
    if proc.returncode != 0:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        raise SystemExit(
            f"apache-tvm failed to compile the TMA kernel ({how}):\n{proc.stdout}\n{proc.stderr}"
        )
    info = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("INFO:"))[5:])

    rng = np.random.default_rng(90)
    a = rng.uniform(-4.0, 4.0, size=(ROWS, COLS)).astype("float32")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from generate import save_npz  # noqa: E402  (same venv, same directory)

    save_npz(out / "tma_scale.npz", {"A": a, "B": a * np.float32(2) + np.float32(1)})
    manifest = {
        "generator": "tests/artifacts/generate_cuda_tma.py",
        "tvm_version": info["tvm_version"],
        "target": {"kind": "cuda", "arch": "sm_90a"},
        "file": "tma_scale.so",
        "npz": "tma_scale.npz",
        "function": "tma_scale",
        "kernel": "tma_scale_kernel",
        "kernel_declaration": info["kernel_declaration"],
        "inputs": ["A"],
        "output": "B",
        "shape": [ROWS, COLS],
        "dtype": "float32",
        "grid": [COLS // TILE, ROWS // TILE, 1],
        "block": [THREADS, 1, 1],
        "dyn_smem_bytes": (TILE * TILE // 2 + 8) * 8,
        "encode": info["encode"],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {out / 'tma_scale.so'}: encode {info['encode']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
