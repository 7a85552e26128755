"""tvm-runtime-webgpu vs the `wgpu` package (same WGSL, same adapter, same process, interleaved),
and vs tvm-runtime-vulkan on the same lavapipe device.

Runs in a venv holding the tvm-runtime wheels (with tvm-runtime-webgpu[wgpu] and
tvm-runtime-vulkan) and numpy:

    python benchmarks/webgpu_bench.py [--json out.json] [--quick] [--any-device]

All sides run kernels compiled by apache-tvm 0.27 (tests/artifacts): ours through the artifact's
TVM host function (argument checks, ``__tvm_set_device``, kernel lookup, launch) then
``dev.sync()``; `wgpu` runs the very WGSL embedded in the same artifact with a uniform buffer
holding packGridDimX, and per call encodes a compute pass, submits and waits with
``wgpuDevicePoll(wait)``; tvm-runtime-vulkan runs the `vulkan` fixtures of the same kernels
(apache-tvm cannot emit SPIR-V, so those are GLSL shaders; see tests/artifacts/vulkan).

Measured: a 4-element add (call overhead: dispatch + wait), a 1024-element add, the 64x32x48
matmul with shared-memory tiles, and 100 dispatches followed by one wait.  Reported: median, p10,
p90 in microseconds and the ratio ours / wgpu of the medians (target: <= 1.0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as h  # noqa: E402
from _stats import ratio, summarize  # noqa: E402
from vulkan_bench import lavapipe_env  # noqa: E402

ARTIFACTS = HERE.parent / "tests" / "artifacts"
sys.path.insert(0, str(HERE.parent / "tests"))


def wgsl_of(so: Path) -> dict[str, str]:
    """WGSL per kernel of the `webgpu` module embedded in an artifact."""
    from backend_testing.payloads import Reader, embedded_module

    r = Reader(embedded_module(so, "webgpu").payload)
    for _ in range(r.u64()):  # the function table: key, name, arg types, tags, extra tags
        r.str_(), r.str_()
        num_args = r.u64()
        r.pos += 4 * num_args
        for _ in range(r.u64()):
            r.str_()
        num_extra = r.u64()
        r.pos += 4 * num_extra
    return {r.str_(): r.str_() for _ in range(r.u64())}


class WgpuSide:
    """The `wgpu` package on the same adapter, running the artifact's WGSL."""

    def __init__(self, any_device: bool):
        import wgpu

        self.wgpu = wgpu
        self.adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        self.info = dict(self.adapter.info)
        if not any_device and "llvmpipe" not in self.info.get("device", "").lower():
            raise SystemExit(f"wgpu did not pick lavapipe: {self.info} (pass --any-device to allow)")
        self.device = self.adapter.request_device_sync()
        self.queue = self.device.queue
        self.poll = self.device._poll_wait  # wgpuDevicePoll(device, wait=True)
        u = wgpu.BufferUsage
        self.usage = u.STORAGE | u.COPY_SRC | u.COPY_DST
        self.uniform_usage = u.UNIFORM | u.COPY_DST

    def buffer(self, array):
        return self.device.create_buffer_with_data(data=array, usage=self.usage)

    def pipeline(self, wgsl: str, entry: str, buffers, pack_grid_dim_x: int):
        import numpy as np

        pod = self.device.create_buffer_with_data(
            data=np.array([pack_grid_dim_x, 0, 0, 0], "uint32"), usage=self.uniform_usage
        )
        sm = self.device.create_shader_module(code=wgsl)
        pl = self.device.create_compute_pipeline(layout="auto", compute={"module": sm, "entry_point": entry})
        entries = [
            {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
            for i, b in enumerate(buffers)
        ]
        entries.append({"binding": len(buffers), "resource": {"buffer": pod, "offset": 0, "size": pod.size}})
        return pl, self.device.create_bind_group(layout=pl.get_bind_group_layout(0), entries=entries)

    def dispatch(self, pl, bg, groups, count=1):
        enc = self.device.create_command_encoder()
        for _ in range(count):
            p = enc.begin_compute_pass()
            p.set_pipeline(pl)
            p.set_bind_group(0, bg)
            p.dispatch_workgroups(*groups)
            p.end()
        self.queue.submit([enc.finish()])

    def read(self, buf, shape):
        import numpy as np

        return np.frombuffer(self.queue.read_buffer(buf), "float32").reshape(shape)


def run(quick: bool, any_device: bool) -> dict:
    import numpy as np

    import tvm

    q = 10 if quick else 1
    dev = tvm.webgpu(0)
    if not dev.exist:
        raise SystemExit(f"no WebGPU device: {tvm.get_global_func('runtime.DeviceDriverStatus')(15)}")
    if not any_device and "llvmpipe" not in dev.device_name:
        raise SystemExit(f"tvm-runtime-webgpu did not pick lavapipe: {dev.device_name}")
    vk = tvm.vulkan(0) if tvm.vulkan(0).exist else None
    peer = WgpuSide(any_device)
    rng = np.random.default_rng(0)
    impls, checks = {}, []

    def add_case(name: str, shapes, grid_x: int, grid: tuple[int, int, int], ref):
        arrays = [rng.standard_normal(s).astype("float32") for s in shapes[:-1]]
        expected = ref(*arrays)
        ours = tvm.runtime.load_module(str(ARTIFACTS / "webgpu" / f"{name}.so"))[name]
        t = [tvm.runtime.tensor(a, dev) for a in arrays] + [tvm.runtime.empty(shapes[-1], "float32", dev)]
        wb = [peer.buffer(a) for a in arrays] + [peer.buffer(np.zeros(shapes[-1], "float32"))]
        pl, bg = peer.pipeline(
            wgsl_of(ARTIFACTS / "webgpu" / f"{name}.so")[f"{name}_kernel"], f"{name}_kernel", wb, grid_x - 1
        )

        def ours_call():
            ours(*t)
            dev.sync()

        def wgpu_call():
            peer.dispatch(pl, bg, grid)
            peer.poll()

        impls[f"ours webgpu: {name} via TVM host function + dev.sync()"] = ours_call
        impls[f"wgpu: {name} same WGSL, encode + submit + poll(wait)"] = wgpu_call
        checks.append((name, lambda: t[-1].numpy(), lambda: peer.read(wb[-1], shapes[-1]), expected))
        if vk is not None:
            vk_f = tvm.runtime.load_module(str(ARTIFACTS / "vulkan" / f"{name}.so"))[name]
            tv = [tvm.runtime.tensor(a, vk) for a in arrays] + [tvm.runtime.empty(shapes[-1], "float32", vk)]

            def vk_call():
                vk_f(*tv)
                vk.sync()

            impls[f"ours vulkan: {name} via TVM host function + dev.sync()"] = vk_call
            checks.append((name + " (vulkan)", lambda: tv[-1].numpy(), lambda: expected, expected))
        return ours, t, pl, bg

    tiny = add_case("tiny_add", [(4,), (4,), (4,)], 1, (1, 1, 1), lambda a, b: a + b)
    add_case("add", [(1024,), (1024,), (1024,)], 16, (16, 1, 1), lambda a, b: a + b)
    add_case("matmul", [(64, 32), (32, 48), (64, 48)], 3, (3, 4, 1), lambda a, b: a @ b)
    for fn in impls.values():
        fn()
    for name, got_ours, got_peer, expected in checks:
        assert np.allclose(got_ours(), expected, rtol=1e-4, atol=1e-4), name
        assert np.allclose(got_peer(), expected, rtol=1e-4, atol=1e-4), name

    latency = h.interleaved(impls, rounds=max(20 // q, 3), block=50, warmup=200 // q)

    batch = 100
    ours_tiny, t4, pl, bg = tiny

    def ours_batch():
        for _ in range(batch):
            ours_tiny(*t4)
        dev.sync()

    def wgpu_batch():
        peer.dispatch(pl, bg, (1, 1, 1), count=batch)
        peer.poll()

    batched = h.interleaved(
        {
            f"ours webgpu: {batch} x tiny_add via host function, one dev.sync()": ours_batch,
            f"wgpu: {batch} tiny_add passes in one encoder, one submit + poll": wgpu_batch,
        },
        rounds=max(10 // q, 2),
        block=5,
        warmup=5,
        per_call=batch,
    )
    info = tvm.backend.webgpu.adapter_info(dev)
    env = {
        "device": dev.device_name,
        "wgpu_native": info["wgpu_native_version"],
        "wgpu": peer.wgpu.__version__,
        "vulkan_device": vk.device_name if vk is not None else None,
        "env_vars": {k: os.environ[k] for k in ("LP_NUM_THREADS", "VK_ICD_FILENAMES") if k in os.environ},
    }
    return {"env": env, "latency": latency, "batched": batched}


def summarize_run(raw: dict) -> dict:
    out: dict = {"env": raw["env"]}
    for group in ("latency", "batched"):
        out[group] = {label: summarize(s).to_dict(3) for label, s in raw[group].items()}
    ratios = {}
    for label, s in out["latency"].items():
        if label.startswith("ours webgpu: "):
            name = label.split(": ", 1)[1].split(" ", 1)[0]
            peer = next(v for k, v in out["latency"].items() if k.startswith(f"wgpu: {name} "))
            ratios[f"{name} dispatch+wait, ours webgpu / wgpu"] = round(ratio(s["median"], peer["median"]), 3)
            vk = [v for k, v in out["latency"].items() if k.startswith(f"ours vulkan: {name} ")]
            if vk:
                ratios[f"{name} dispatch+wait, ours webgpu / ours vulkan"] = round(
                    ratio(s["median"], vk[0]["median"]), 3
                )
    (ours_b, peer_b) = out["batched"].values()
    ratios["100 dispatches + one wait, ours webgpu / wgpu one encoder"] = round(
        ratio(ours_b["median"], peer_b["median"]), 3
    )
    out["ratios"] = ratios
    return out


def table(res: dict) -> str:
    lines = [
        f"\n## {res['env']['device']} (wgpu-native {res['env']['wgpu_native']}, wgpu {res['env']['wgpu']})\n"
    ]
    lines.extend(h.SUMMARY_TABLE_HEADER)
    for group, unit in (("latency", ""), ("batched", " (per dispatch)")):
        for label, s in res[group].items():
            lines.append(h.summary_row(f"{label}{unit}", s))
    lines.append("")
    lines.extend(f"- {name}: **{r:.3f}**" for name, r in res["ratios"].items())
    return "\n".join(lines)


def main() -> int:
    ap = h.bench_parser(__doc__, "webgpu_bench")
    ap.add_argument("--any-device", action="store_true", help="do not insist on lavapipe")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # raw samples as JSON on stdout
        json.dump(run(args.quick, args.any_device), sys.stdout)
        return 0
    env = lavapipe_env()  # lavapipe for every side, as in vulkan_bench.py
    env.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="xdg-"))
    raw = h.rerun_self(__file__, [*["--quick"] * args.quick, *["--any-device"] * args.any_device], env)
    import numpy as np

    res = summarize_run(raw)
    what = "tvm-runtime-webgpu vs wgpu (same WGSL, adapter and process) and vs tvm-runtime-vulkan"
    return h.report(args, what, np.__version__, {"run": res}, table(res))


if __name__ == "__main__":
    sys.exit(main())
