"""tvm-runtime-opencl vs pyopencl on the same OpenCL device, same process, interleaved.

Runs in a venv holding the tvm-runtime wheels (with tvm-runtime-opencl) and pyopencl:

    python benchmarks/opencl_bench.py [--json out.json] [--quick] [--artifacts DIR]

For each PoCL configuration (the default `pthread` device in this process, then PoCL's
single-threaded `basic` device in a child process with POCL_DEVICES=basic) it measures:

* launch + finish of a tiny kernel (the apache-tvm 0.27 artifact `opencl/tiny_add.so`,
  4 elements, one work-group of 4):
  - ours: ``f(a, b, c); dev.sync()``, i.e. TVM host code -> __tvm_set_device -> the kernel's
    packed function -> clSetKernelArg/clEnqueueNDRangeKernel, then clFinish through the core;
  - pyopencl: ``knl(queue, (4,), (4,), a, b, c); queue.finish()`` on the *identical* kernel
    source, extracted from the artifact;
  plus reference rows (ours calling the device kernel directly, pyopencl with preset
  arguments, each side's bare finish) that explain where the time goes;
* matmul throughput: `opencl/matmul.so` (64x32 @ 32x48, 16x16 tiles in __local memory),
  launch + finish, both sides on the same kernel source and launch geometry.

Implementations are interleaved in small blocks, rotating the order every round, so that
machine noise hits all of them alike; each sample is one call. Reported: median, p10 and p90
in microseconds and the ratio ours / pyopencl of the medians. On this kind of VM the pthread
device's latency is dominated by thread wake-ups; the `basic` device shows API overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as h  # noqa: E402
from _stats import ratio, summarize  # noqa: E402

DEFAULT_ARTIFACTS = HERE.parent / "tests" / "artifacts"


# ----------------------------------------------------------------------------- kernels


def opencl_source(so_path: Path) -> str:
    """The OpenCL C text stored in an artifact's `opencl` module (apache-tvm 0.27 layout: the
    source is the module payload's last field, a u64 length followed by the text, which starts
    with '// Function: ')."""
    data = so_path.read_bytes()
    i = data.find(b"// Function: ")
    if i < 8:
        raise ValueError(f"no OpenCL source in {so_path}")
    (n,) = struct.unpack_from("<Q", data, i - 8)
    return data[i : i + n].decode()


# ----------------------------------------------------------------------------- one config


def run_config(artifacts: Path, quick: bool) -> dict:
    import pyopencl as cl

    import tvm

    dev = tvm.opencl(0)
    if not dev.exist:
        status = tvm.get_global_func("runtime.DeviceDriverStatus")(4)
        raise SystemExit(f"no OpenCL device for tvm-runtime-opencl: {status}")
    name = dev.device_name
    cl_dev = next((d for p in cl.get_platforms() for d in p.get_devices() if d.name == name), None)
    if cl_dev is None:
        raise SystemExit(f"pyopencl does not see the device {name!r}")
    ctx = cl.Context([cl_dev])
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    env = {
        "device": name,
        "platform": cl_dev.platform.name,
        "device_version": cl_dev.version,
        "driver_version": cl_dev.driver_version,
        "pocl_env": {k: v for k, v in os.environ.items() if k.startswith("POCL")},
        "pyopencl": cl.VERSION_TEXT,
    }
    scale = 10 if quick else 1
    rng = np.random.default_rng(0)

    # ---- tiny kernel: launch + finish
    tiny_so = artifacts / "opencl" / "tiny_add.so"
    mod = tvm.runtime.load_module(str(tiny_so))
    f = mod["tiny_add"]
    kernel = mod.imports[0]["tiny_add_kernel"]
    x, y = rng.standard_normal(4).astype("float32"), rng.standard_normal(4).astype("float32")
    a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)
    c = tvm.runtime.empty((4,), "float32", dev)
    sync = dev.sync
    stream_sync = tvm.get_global_func("runtime.Device_StreamSync")

    knl = cl.Program(ctx, opencl_source(tiny_so)).build().tiny_add_kernel
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=y)
    dc = cl.Buffer(ctx, mf.READ_WRITE, 16)
    knl_raw = cl.Program(ctx, opencl_source(tiny_so)).build().tiny_add_kernel
    knl_raw.set_args(da, db, dc)
    enqueue = cl.enqueue_nd_range_kernel

    def ours():
        f(a, b, c)
        sync()

    def ours_cached_sync():
        f(a, b, c)
        stream_sync(dev, 0)

    def ours_kernel_direct():
        kernel(a, b, c, 1, 4)
        stream_sync(dev, 0)

    def pyopencl_call():
        knl(queue, (4,), (4,), da, db, dc)
        queue.finish()

    def pyopencl_raw():
        enqueue(queue, knl_raw, (4,), (4,))
        queue.finish()

    def ours_sync_only():
        sync()

    # correctness of both sides before timing
    ours()
    pyopencl_call()
    got = np.empty(4, np.float32)
    cl.enqueue_copy(queue, got, dc)
    assert np.allclose(c.numpy(), x + y) and np.allclose(got, x + y)

    tiny = h.interleaved(
        {
            "ours: f(a,b,c); dev.sync()": ours,
            "pyopencl: knl(queue,...); queue.finish()": pyopencl_call,
            "ours: f(a,b,c); Device_StreamSync global": ours_cached_sync,
            "ours: device kernel called directly + sync": ours_kernel_direct,
            "pyopencl: preset args, enqueue_nd_range_kernel + finish": pyopencl_raw,
            "ours: dev.sync() alone": ours_sync_only,
            "pyopencl: queue.finish() alone": queue.finish,
        },
        rounds=max(40 // scale, 4),
        block=125,
        warmup=500 // scale,
    )

    # ---- matmul: launch + finish, same source and geometry
    mm_so = artifacts / "opencl" / "matmul.so"
    mm = tvm.runtime.load_module(str(mm_so))["matmul"]
    a_mat = rng.standard_normal((64, 32)).astype("float32")
    b_mat = rng.standard_normal((32, 48)).astype("float32")
    t_a, t_b = tvm.runtime.tensor(a_mat, dev), tvm.runtime.tensor(b_mat, dev)
    t_c = tvm.runtime.empty((64, 48), "float32", dev)
    mm_knl = cl.Program(ctx, opencl_source(mm_so)).build().matmul_kernel
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_mat)
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_mat)
    d_c = cl.Buffer(ctx, mf.READ_WRITE, 64 * 48 * 4)

    def ours_mm():
        mm(t_a, t_b, t_c)
        sync()

    def pyopencl_mm():
        # launch tags blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x: grid (3, 4), block (16, 16)
        mm_knl(queue, (48, 64), (16, 16), d_a, d_b, d_c)
        queue.finish()

    ours_mm()
    pyopencl_mm()
    c_host = np.empty((64, 48), np.float32)
    cl.enqueue_copy(queue, c_host, d_c)
    assert np.allclose(t_c.numpy(), a_mat @ b_mat, atol=1e-4) and np.allclose(
        c_host, a_mat @ b_mat, atol=1e-4
    )
    matmul = h.interleaved(
        {"ours: matmul(A,B,C); dev.sync()": ours_mm, "pyopencl: knl(...); finish()": pyopencl_mm},
        rounds=max(100 // scale, 2),
        block=10,
        warmup=100 // scale,
    )
    return {"env": env, "tiny": tiny, "matmul": matmul, "matmul_flop": 2.0 * 64 * 32 * 48}


def summarize_config(raw: dict) -> dict:
    out = {"env": raw["env"], "tiny": {}, "matmul": {}}
    for group in ("tiny", "matmul"):
        for label, samples in raw[group].items():
            out[group][label] = summarize(samples).to_dict(3)
    tiny = out["tiny"]
    ours = tiny["ours: f(a,b,c); dev.sync()"]["median"]
    py = tiny["pyopencl: knl(queue,...); queue.finish()"]["median"]
    ours_cached = tiny["ours: f(a,b,c); Device_StreamSync global"]["median"]
    mm = out["matmul"]
    mm_ours = mm["ours: matmul(A,B,C); dev.sync()"]["median"]
    mm_py = mm["pyopencl: knl(...); finish()"]["median"]
    out["ratios"] = {
        "tiny_launch_finish_ours_over_pyopencl": round(ratio(ours, py), 3),
        "tiny_launch_finish_ours_cached_sync_over_pyopencl": round(ratio(ours_cached, py), 3),
        "matmul_ours_over_pyopencl": round(ratio(mm_ours, mm_py), 3),
    }
    out["matmul_gflops_at_median"] = {
        "ours": round(raw["matmul_flop"] / mm_ours / 1e3, 3),
        "pyopencl": round(raw["matmul_flop"] / mm_py / 1e3, 3),
    }
    return out


# ----------------------------------------------------------------------------- driver


def table(results: dict) -> str:
    lines = []
    for config, res in results["configs"].items():
        env = res["env"]
        lines.append(f"\n## PoCL `{config}` device: {env['device']} ({env['driver_version']})\n")
        lines.extend(h.SUMMARY_TABLE_HEADER)
        for group in ("tiny", "matmul"):
            for label, s in res[group].items():
                prefix = "tiny_add launch+finish" if group == "tiny" else "matmul 64x32x48"
                lines.append(h.summary_row(f"{prefix}, {label}", s))
        r, g = res["ratios"], res["matmul_gflops_at_median"]
        lines.append("")
        lines.append(
            f"ratios ours/pyopencl (medians): tiny launch+finish "
            f"{r['tiny_launch_finish_ours_over_pyopencl']:.3f} "
            f"(with the sync global cached: {r['tiny_launch_finish_ours_cached_sync_over_pyopencl']:.3f}); "
            f"matmul {r['matmul_ours_over_pyopencl']:.3f} "
            f"({g['ours']:.2f} vs {g['pyopencl']:.2f} GFLOP/s)"
        )
    return "\n".join(lines)


def main() -> int:
    ap = h.bench_parser(__doc__, "opencl_bench")
    ap.add_argument("--artifacts", type=Path, default=DEFAULT_ARTIFACTS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:  # one configuration, raw samples as JSON on stdout
        json.dump(run_config(args.artifacts, args.quick), sys.stdout)
        return 0

    configs = {}
    for config, extra_env in (("pthread (default)", {}), ("basic", {"POCL_DEVICES": "basic"})):
        # Each configuration in a fresh process: PoCL reads POCL_DEVICES once, at first use.
        env = dict(os.environ)
        env.pop("POCL_DEVICES", None)
        env.update(extra_env)
        flags = ["--artifacts", str(args.artifacts), *["--quick"] * args.quick]
        configs[config] = summarize_config(h.rerun_self(__file__, flags, env))
    body = {"configs": configs}
    return h.report(args, "tvm-runtime-opencl vs pyopencl", np.__version__, body, table(body))


if __name__ == "__main__":
    sys.exit(main())
