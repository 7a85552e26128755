"""tvm-runtime-vulkan vs the `wgpu` package on the same Vulkan device, same process, interleaved.

Runs in a venv holding the tvm-runtime wheels (with tvm-runtime-vulkan), numpy and `wgpu` (PyPI):

    python benchmarks/vulkan_bench.py [--json out.json] [--quick] [--artifacts DIR] [--any-device]

Both sides run the *identical* SPIR-V: the kernels of the fixture module
``tests/artifacts/vulkan/bench.vulkan`` (GLSL compiled by glslc; wgpu runs them through naga with
the entry point named after the kernel).  Unless VK_ICD_FILENAMES/VK_DRIVER_FILES are set, both
are forced onto Mesa lavapipe, and every configuration runs in its own child process:
lavapipe's default (one thread per core) and ``LP_NUM_THREADS=0`` (compute in lavapipe's queue
thread), because lavapipe reads that variable once.

Measured, implementations interleaved in blocks with the order rotated every round:

* dispatch + wait of a tiny kernel (the headline "overhead"):
  - ours: the kernel's packed function (what TVM host code calls: ``f(buf, grid)``), then
    ``runtime.Device_StreamSync`` (record into a command buffer, submit, wait on a fence);
  - wgpu: new command encoder + compute pass + set_pipeline/bind_group + dispatch + finish +
    ``queue.submit``, then ``wgpuDevicePoll(wait)`` (the fair wait; see perf-peers.md);
  plus the same for a 4096-element add, ours through a TVM-style host function
  (``tiny_add.so``: argument checks, ``__tvm_set_device``, kernel lookup, launch) and each side's
  idle wait;
* 1000 dispatches then one wait (ours batches them into command buffers; wgpu records them
  in one compute pass, or submits each);
* matmul 128^3 float32 throughput (8x8 workgroups, 32x32 tiles, shared memory), dispatch + wait.

Reported: median, p10 and p90 in microseconds, and the ratio ours / wgpu of the medians.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as h  # noqa: E402
from _stats import ratio, summarize  # noqa: E402

DEFAULT_ARTIFACTS = HERE.parent / "tests" / "artifacts" / "vulkan"
CONFIGS = {"default": {}, "LP_NUM_THREADS=0": {"LP_NUM_THREADS": "0"}}


# ----------------------------------------------------------------------------- one config


def read_kernels(artifacts: Path, name: str) -> dict[str, bytes]:
    """SPIR-V bytes per kernel of a fixture payload."""
    sys.path.insert(0, str(artifacts))
    from vulkan_payload import read_payload

    _, kernels = read_payload((artifacts / f"{name}.vulkan").read_bytes())
    return {k.name: b"".join(w.to_bytes(4, "little") for w in k.words) for k in kernels}


class WgpuSide:
    """wgpu on the same device, dispatching our SPIR-V."""

    def __init__(self, any_device: bool):
        import wgpu
        from wgpu.backends.wgpu_native import extras

        extras.set_instance_extras(backends=["Vulkan"])
        self.wgpu = wgpu
        self.adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        self.info = dict(self.adapter.info)
        if (
            not any_device
            and "llvmpipe" not in (self.info.get("device", "") + self.info.get("vendor", "")).lower()
        ):
            raise SystemExit(f"wgpu did not pick lavapipe: {self.info} (pass --any-device to allow)")
        self.device = self.adapter.request_device_sync()
        self.queue = self.device.queue
        self.poll = self.device._poll_wait  # wgpuDevicePoll(device, wait=True): no thread hand-off
        usage = wgpu.BufferUsage
        self.usage = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        self.readback = self.device.create_buffer(size=4, usage=usage.MAP_READ | usage.COPY_DST)

    def buffer(self, array):
        return self.device.create_buffer_with_data(data=array, usage=self.usage)

    def pipeline(self, spirv: bytes, entry: str, buffers):
        sm = self.device.create_shader_module(code=spirv)
        pl = self.device.create_compute_pipeline(layout="auto", compute={"module": sm, "entry_point": entry})
        bg = self.device.create_bind_group(
            layout=pl.get_bind_group_layout(0),
            entries=[
                {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                for i, b in enumerate(buffers)
            ],
        )
        return pl, bg

    def encode(self, pl, bg, groups, count=1):
        enc = self.device.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pl)
        p.set_bind_group(0, bg)
        for _ in range(count):
            p.dispatch_workgroups(*groups)
        p.end()
        return enc

    def dispatch(self, pl, bg, groups, count=1):
        self.queue.submit([self.encode(pl, bg, groups, count).finish()])

    def dispatch_map_wait(self, pl, bg, groups, src):
        # The public-API wait: copy 4 bytes into a MAP_READ buffer and map it.
        enc = self.encode(pl, bg, groups)
        enc.copy_buffer_to_buffer(src, 0, self.readback, 0, 4)
        self.queue.submit([enc.finish()])
        self.readback.map_sync("READ")
        self.readback.unmap()

    def read(self, buf, dtype, shape):
        import numpy as np

        return np.frombuffer(self.queue.read_buffer(buf), dtype).reshape(shape)


def run_config(artifacts: Path, quick: bool, any_device: bool) -> dict:
    import numpy as np
    import tvm_ffi

    import tvm

    q = 10 if quick else 1
    dev = tvm.vulkan(0)
    if not dev.exist:
        raise SystemExit(
            f"no Vulkan device for tvm-runtime-vulkan: {tvm.get_global_func('runtime.DeviceDriverStatus')(7)}"
        )
    if not any_device and "llvmpipe" not in dev.device_name:
        raise SystemExit(
            f"tvm-runtime-vulkan did not pick lavapipe: {dev.device_name} (pass --any-device to allow)"
        )
    peer = WgpuSide(any_device)
    env = {
        "device": dev.device_name,
        "driver": tvm.backend.vulkan.get_target_property(dev, "driver_name"),
        "vulkan_api": dev.compute_version,
        "wgpu": peer.wgpu.__version__,
        "wgpu_adapter": peer.info,
        "env_vars": {
            k: os.environ[k]
            for k in ("LP_NUM_THREADS", "VK_ICD_FILENAMES", "VK_DRIVER_FILES")
            if k in os.environ
        },
    }

    spirv = read_kernels(artifacts, "bench")
    mod = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.vulkan")(
        (artifacts / "bench.vulkan").read_bytes()
    )
    sync = tvm.get_global_func("runtime.Device_StreamSync")
    rng = np.random.default_rng(0)

    # ---- tiny kernels: dispatch + wait
    trivial = mod["trivial_kernel"]
    out1 = tvm.runtime.tensor(np.zeros(1, "float32"), dev)
    w_out1 = peer.buffer(np.zeros(4, "float32"))
    w_trivial = peer.pipeline(spirv["trivial_kernel"], "trivial_kernel", [w_out1])

    n = 4096
    x, y = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    add = mod["add4096_kernel"]
    a, b, c = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), tvm.runtime.empty((n,), "float32", dev)
    w_a, w_b, w_c = peer.buffer(x), peer.buffer(y), peer.buffer(np.zeros(n, "float32"))
    w_add = peer.pipeline(spirv["add4096_kernel"], "add4096_kernel", [w_a, w_b, w_c])

    tiny_host = tvm.runtime.load_module(str(artifacts / "tiny_add.so"))["tiny_add"]
    tiny_spirv = read_kernels(artifacts, "tiny_add")["tiny_add_kernel"]
    t4 = [tvm.runtime.tensor(rng.standard_normal(4).astype("float32"), dev) for _ in range(3)]
    w4 = [peer.buffer(t.numpy()) for t in t4]
    w_tiny = peer.pipeline(tiny_spirv, "tiny_add_kernel", w4)

    # correctness of both sides before timing
    trivial(out1, 1)
    add(a, b, c, n // 128, 128)
    tiny_host(*t4)
    peer.dispatch(*w_trivial, (1, 1, 1))
    peer.dispatch(*w_add, (n // 128, 1, 1))
    peer.dispatch(*w_tiny, (1, 1, 1))
    peer.poll()
    assert out1.numpy()[0] == 1.0 and peer.read(w_out1, "float32", (4,))[0] == 1.0
    assert np.array_equal(c.numpy(), x + y) and np.array_equal(peer.read(w_c, "float32", (n,)), x + y)
    assert np.allclose(t4[2].numpy(), t4[0].numpy() + t4[1].numpy())

    def ours_trivial():
        trivial(out1, 1)
        sync(dev, 0)

    def ours_add():
        add(a, b, c, n // 128, 128)
        sync(dev, 0)

    def ours_tiny_host():
        tiny_host(*t4)
        dev.sync()

    def wgpu_trivial():
        peer.dispatch(*w_trivial, (1, 1, 1))
        peer.poll()

    def wgpu_add():
        peer.dispatch(*w_add, (n // 128, 1, 1))
        peer.poll()

    def wgpu_tiny():
        peer.dispatch(*w_tiny, (1, 1, 1))
        peer.poll()

    rounds, block, warm = max(30 // q, 3), 100, 300 // q
    latency = h.interleaved(
        {
            "ours: trivial kernel call + Device_StreamSync": ours_trivial,
            "wgpu: trivial encode + submit + poll(wait)": wgpu_trivial,
            "ours: add4096 kernel call + Device_StreamSync": ours_add,
            "wgpu: add4096 encode + submit + poll(wait)": wgpu_add,
            "ours: tiny_add via TVM host function + dev.sync()": ours_tiny_host,
            "wgpu: tiny_add encode + submit + poll(wait)": wgpu_tiny,
            "wgpu: trivial + copy 4 B + map_sync/unmap (public API wait)": lambda: peer.dispatch_map_wait(
                *w_trivial, (1, 1, 1), w_out1
            ),
            "ours: Device_StreamSync with nothing queued": lambda: sync(dev, 0),
            "wgpu: poll(wait) with nothing queued": peer.poll,
        },
        rounds=rounds,
        block=block,
        warmup=warm,
    )

    # ---- 1000 dispatches, one wait
    batch = 1000

    def ours_batch():
        for _ in range(batch):
            trivial(out1, 1)
        sync(dev, 0)

    def wgpu_batch_one_pass():
        peer.dispatch(*w_trivial, (1, 1, 1), count=batch)
        peer.poll()

    def wgpu_batch_submits():
        for _ in range(batch):
            peer.dispatch(*w_trivial, (1, 1, 1))
        peer.poll()

    batched = h.interleaved(
        {
            "ours: 1000 x trivial kernel call, one Device_StreamSync": ours_batch,
            "wgpu: 1000 trivial dispatches in one pass, one submit + poll": wgpu_batch_one_pass,
            "wgpu: 1000 x (encode + submit), one poll": wgpu_batch_submits,
        },
        rounds=max(10 // q, 2),
        block=3,
        warmup=2,
        per_call=batch,
    )

    # ---- matmul 128^3
    m = 128
    am, bm = rng.standard_normal((m, m)).astype("float32"), rng.standard_normal((m, m)).astype("float32")
    matmul = mod["matmul128_kernel"]
    ta, tb, tc = (
        tvm.runtime.tensor(am, dev),
        tvm.runtime.tensor(bm, dev),
        tvm.runtime.empty((m, m), "float32", dev),
    )
    wa, wb, wc = peer.buffer(am), peer.buffer(bm), peer.buffer(np.zeros((m, m), "float32"))
    w_mm = peer.pipeline(spirv["matmul128_kernel"], "matmul128_kernel", [wa, wb, wc])

    def ours_mm():
        matmul(ta, tb, tc, 4, 4, 8, 8)  # tags blockIdx.y, blockIdx.x, threadIdx.y, threadIdx.x
        sync(dev, 0)

    def wgpu_mm():
        peer.dispatch(*w_mm, (4, 4, 1))
        peer.poll()

    ours_mm()
    wgpu_mm()
    ref = am @ bm
    assert (
        np.abs(tc.numpy() - ref).max() <= 1e-3
        and np.abs(peer.read(wc, "float32", (m, m)) - ref).max() <= 1e-3
    )
    mm = h.interleaved(
        {
            "ours: matmul128 kernel call + Device_StreamSync": ours_mm,
            "wgpu: matmul128 encode + submit + poll(wait)": wgpu_mm,
        },
        rounds=max(10 // q, 2),
        block=max(30 // q, 3),
        warmup=max(30 // q, 3),
    )
    return {"env": env, "latency": latency, "batched": batched, "matmul": mm, "matmul_flop": 2.0 * m**3}


# ----------------------------------------------------------------------------- summaries

HEADLINES = {
    "trivial dispatch+wait": (
        "latency",
        "ours: trivial kernel call + Device_StreamSync",
        "wgpu: trivial encode + submit + poll(wait)",
    ),
    "add4096 dispatch+wait": (
        "latency",
        "ours: add4096 kernel call + Device_StreamSync",
        "wgpu: add4096 encode + submit + poll(wait)",
    ),
    "tiny_add via host code vs wgpu dispatch+wait": (
        "latency",
        "ours: tiny_add via TVM host function + dev.sync()",
        "wgpu: tiny_add encode + submit + poll(wait)",
    ),
    "1000 dispatches + one wait, per dispatch (vs wgpu one pass)": (
        "batched",
        "ours: 1000 x trivial kernel call, one Device_StreamSync",
        "wgpu: 1000 trivial dispatches in one pass, one submit + poll",
    ),
    "matmul128 dispatch+wait": (
        "matmul",
        "ours: matmul128 kernel call + Device_StreamSync",
        "wgpu: matmul128 encode + submit + poll(wait)",
    ),
}


def summarize_config(raw: dict) -> dict:
    out: dict = {"env": raw["env"]}
    for group in ("latency", "batched", "matmul"):
        out[group] = {label: summarize(s).to_dict(3) for label, s in raw[group].items()}
    out["ratios_ours_over_wgpu"] = {
        name: round(ratio(out[g][ours]["median"], out[g][theirs]["median"]), 3)
        for name, (g, ours, theirs) in HEADLINES.items()
    }
    mm = out["matmul"]
    out["matmul_gflops_at_median"] = {
        side: round(raw["matmul_flop"] / mm[label]["median"] / 1e3, 3)
        for side, label in (
            ("ours", "ours: matmul128 kernel call + Device_StreamSync"),
            ("wgpu", "wgpu: matmul128 encode + submit + poll(wait)"),
        )
    }
    return out


def table(results: dict) -> str:
    lines = []
    for config, res in results["configs"].items():
        lines.append(f"\n## lavapipe `{config}`: {res['env']['device']} (wgpu {res['env']['wgpu']})\n")
        lines.extend(h.SUMMARY_TABLE_HEADER)
        for group, unit in (("latency", ""), ("batched", " (per dispatch)"), ("matmul", "")):
            for label, s in res[group].items():
                lines.append(h.summary_row(f"{label}{unit}", s))
        lines.append("")
        for name, r in res["ratios_ours_over_wgpu"].items():
            lines.append(f"- ours / wgpu, {name}: **{r:.3f}**")
        g = res["matmul_gflops_at_median"]
        lines.append(f"- matmul128 throughput: ours {g['ours']:.2f} GFLOP/s, wgpu {g['wgpu']:.2f} GFLOP/s")
    return "\n".join(lines)


def cpu_busy_fraction(seconds: float = 2.0) -> float:
    """Share of all CPUs busy over `seconds` (from /proc/stat), 0 where unknown."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return sum(fields), idle

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except OSError:
        return 0.0
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1)


def wait_until_quiet(limit_s: float, threshold: float = 0.10) -> float:
    """Waits (up to `limit_s`) until other processes leave the machine idle; returns the last
    busy fraction.  On a shared VM a neighbour's compile job changes lavapipe timings severalfold."""
    deadline = time.monotonic() + limit_s
    busy = cpu_busy_fraction()
    while busy > threshold and time.monotonic() < deadline:
        busy = cpu_busy_fraction()
    return busy


def lavapipe_env() -> dict[str, str]:
    env = dict(os.environ)
    if not (env.get("VK_ICD_FILENAMES") or env.get("VK_DRIVER_FILES")):
        for d in ("/usr/share/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/etc/vulkan/icd.d"):
            hits = sorted(glob.glob(os.path.join(d, "lvp_icd*.json")))
            if hits:
                env["VK_ICD_FILENAMES"] = env["VK_DRIVER_FILES"] = hits[0]
                break
    env.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
    # Only silences Mesa's "XDG_RUNTIME_DIR is invalid" WSI messages.
    env.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="xdg-"))
    env.pop("LP_NUM_THREADS", None)
    return env


def main() -> int:
    ap = h.bench_parser(__doc__, "vulkan_bench")
    ap.add_argument("--artifacts", type=Path, default=DEFAULT_ARTIFACTS)
    ap.add_argument("--any-device", action="store_true", help="do not insist on lavapipe")
    ap.add_argument("--config", choices=list(CONFIGS), action="append", help="run only these configurations")
    ap.add_argument(
        "--quiet-gate",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each configuration, wait up to SECONDS for the machine to be idle (<10%% busy)",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:  # one configuration, raw samples as JSON on stdout
        json.dump(run_config(args.artifacts, args.quick, args.any_device), sys.stdout)
        return 0

    configs = {}
    busy_before = {}
    for config in args.config or list(CONFIGS):
        if args.quiet_gate > 0:
            busy_before[config] = round(wait_until_quiet(args.quiet_gate), 3)
        flags = [
            "--artifacts",
            str(args.artifacts),
            *["--quick"] * args.quick,
            *["--any-device"] * args.any_device,
        ]
        env = lavapipe_env()
        env.update(CONFIGS[config])
        configs[config] = summarize_config(h.rerun_self(__file__, flags, env))
    import numpy as np

    results = {
        "benchmark": "tvm-runtime-vulkan vs wgpu (same SPIR-V, same device, same process)",
        "env": {**h.host_info(np.__version__), "cpu_busy_before_each_config": busy_before},
        "configs": configs,
    }
    h.publish(results, args.out, args.markdown, table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
