"""The one child program of the benchmarks: runs in the venv under test, prints one JSON line.

    python benchmarks/_child.py '{"task": "vm_call", "artifact": ..., "blocks": 15, ...}'

The orchestrating scripts (vm_bench.py, core_bench.py, ...) start it in a fresh interpreter of
each venv they compare, in a temporary working directory so the repository is not on sys.path.
A *measured* task sets a workload up (loading the artifact and checking its first result against
the expectations), runs ``warmup`` untimed iterations, then ``blocks`` timed blocks with the
collector off, checks the result again and prints every block's numbers plus what the workload
reports at the end.  A *one-shot* task (``probe``, ``write_tensor_cache``) prints its answer.

Nothing but the standard library is imported here at the top: numpy and the package under test
are imported by the workload that needs them, so ``probe`` describes a venv without importing it.
The import-cost measurement has its own, smaller child (_import_child.py): it must import nothing
before the measured statement.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

now = time.perf_counter_ns


@dataclass
class Workload:
    """What the driver needs of a measured task.

    ``block()`` runs one timed block and returns its numbers by series name; ``warmup_once()`` is
    one untimed iteration; ``finish()`` checks the state after timing and returns extra fields.
    """

    block: Callable[[], dict[str, float]]
    warmup_once: Callable[[], Any]
    finish: Callable[[], dict[str, Any]] = dict
    report: dict[str, Any] = field(default_factory=dict)  # fields known at set-up (cold time)


def calls_per_block(loop: Callable[[range], Any], iters: int, key: str = "per_call_ns") -> Callable:
    """A block of ``iters`` calls made by ``loop(range(iters))`` (the call inlined in the loop,
    so the measured time has no extra Python frame per call), reported as ns per call."""
    rng = range(iters)

    def block() -> dict[str, float]:
        t0 = now()
        loop(rng)
        return {key: (now() - t0) / iters}

    return block


# create_tir_paged_kv_cache's sizes, read from a model's config: batch, total length, chunk, page.
KV_CACHE_SIZES = ("max_batch_size", "max_total_seq_len", "prefill_chunk_size", "page_size")


def paged_kv_cache(create: Callable, cfg: dict[str, Any], shape: Callable) -> Any:
    """``create_tir_paged_kv_cache`` of a compiled model (``create``: the VM's or a session's
    function; ``shape``: tvm.runtime.ShapeTuple or tvm_ffi.Shape) with the model's sizes and no
    sliding window (used by llm_bench's child, profile_bench.py and _disco_bench_child.py)."""
    return create(*(shape([cfg[k]]) for k in KV_CACHE_SIZES), shape([0]))


def _allclose_or_exit(np: Any, got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
        raise SystemExit(f"WRONG RESULT ({what}): {got!r} != {want!r}")


# ----------------------------------------------------------------------- measured workloads


def kernel_call(spec: dict[str, Any]) -> Workload:
    """A compiled kernel called from Python (core_bench): ``api`` "tvm" or the bare "tvm_ffi"."""
    import numpy as np

    data = np.load(spec["npz"])
    keep = []  # numpy buffers that back tvm_ffi tensors (floor variant)
    if spec["api"] == "tvm":
        import tvm

        mod = tvm.runtime.load_module(spec["artifact"])

        def to_dev(x: Any) -> Any:
            return tvm.runtime.tensor(x)

        def empty(shape: list[int], dtype: str) -> Any:
            return tvm.runtime.empty(tuple(shape), dtype)

        def to_np(t: Any) -> Any:
            return t.numpy()
    else:
        import tvm_ffi

        mod = tvm_ffi.load_module(spec["artifact"])

        def to_dev(x: Any) -> Any:
            x = np.ascontiguousarray(x).copy()
            keep.append(x)
            return tvm_ffi.from_dlpack(x)

        def empty(shape: list[int], dtype: str) -> Any:
            return to_dev(np.empty(tuple(shape), dtype))

        def to_np(t: Any) -> Any:
            return np.from_dlpack(t)

    f = mod[spec["function"]]
    args, outputs = [], []
    for a in spec["args"]:
        if a["kind"] == "input":
            args.append(to_dev(data[a["key"]]))
        else:
            t = empty(a["shape"], a["dtype"])
            args.append(t)
            outputs.append((a["key"], t))
    args_t = tuple(args)

    def check(when: str) -> None:
        for key, t in outputs:
            _allclose_or_exit(np, to_np(t), data[key], spec["rtol"], spec["atol"], f"{when}, {key!r}")

    if len(args_t) == 3:
        a, b, c = args_t

        def loop(rng: range) -> None:
            for _ in rng:
                f(a, b, c)
    else:

        def loop(rng: range) -> None:
            for _ in rng:
                f(*args_t)

    f(*args_t)
    check("first call")

    def finish() -> dict[str, Any]:
        rng, loop_ns = range(spec["iters"]), []
        for _ in range(3):  # the bare Python loop, to subtract if wanted
            t0 = now()
            for _ in rng:
                pass
            loop_ns.append((now() - t0) / spec["iters"])
        check("after timing")
        return {"loop_ns": min(loop_ns)}

    return Workload(calls_per_block(loop, spec["iters"]), lambda: f(*args_t), finish)


def _vm_main(spec: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(tvm, the VM's main function, cold ms: load_module + VirtualMachine + lookup)."""
    import tvm
    from tvm.runtime.vm import VirtualMachine

    t0 = time.perf_counter()
    vm = VirtualMachine(tvm.runtime.load_module(spec["artifact"]), tvm.cpu(0))
    return tvm, vm["main"], t0


def vm_call(spec: dict[str, Any]) -> Workload:
    """``vm["main"](*inputs)`` of a Relax model on the CPU, inputs from the npz (vm_bench)."""
    import numpy as np

    import tvm

    data = np.load(spec["npz"])
    dev = tvm.cpu(0)
    args = tuple(tvm.runtime.tensor(data[k], dev) for k in spec["inputs"])

    def check(out: Any, when: str) -> None:
        outs = list(out) if len(spec["outputs"]) > 1 else [out]
        for key, t in zip(spec["outputs"], outs):
            _allclose_or_exit(np, t.numpy(), data[key], spec["rtol"], spec["atol"], f"{when}, {key!r}")

    _, f, t0 = _vm_main(spec)
    out = f(*args)
    cold_ms = (time.perf_counter() - t0) * 1e3
    check(out, "first call")
    del out

    def loop(rng: range) -> None:
        for _ in rng:
            f(*args)

    def finish() -> dict[str, Any]:
        check(f(*args), "after timing")
        return {}

    return Workload(calls_per_block(loop, spec["iters"]), lambda: f(*args), finish, {"cold_ms": cold_ms})


def contrib_sort(spec: dict[str, Any]) -> Workload:
    """A sort / top-k model whose host code calls tvm.contrib.sort (extra_bench)."""
    import numpy as np

    import tvm

    x_np = np.random.default_rng(spec["seed"]).standard_normal(spec["shape"]).astype("float32")
    x = tvm.runtime.tensor(x_np, tvm.cpu(0))
    _, f, _ = _vm_main(spec)
    out = f(x)
    if spec["op"] == "sort":
        ok = np.array_equal(out.numpy(), np.sort(x_np, axis=-1))
    else:
        order = np.argsort(-x_np.astype("float64"), axis=-1, kind="stable")[:, : spec["k"]]
        ok = np.array_equal(out[1].numpy(), order) and np.array_equal(
            out[0].numpy(), np.take_along_axis(x_np, order, axis=-1)
        )
    if not ok:
        raise SystemExit("WRONG RESULT")

    def loop(rng: range) -> None:
        for _ in rng:
            f(x)

    return Workload(calls_per_block(loop, spec["iters"]), lambda: f(x))


def model_x(spec: dict[str, Any]) -> Workload:
    """``vm["main"](x)`` checked against an ``expected`` output to 1e-3 (byoc_bench)."""
    import numpy as np

    import tvm

    data = np.load(spec["npz"])
    x = tvm.runtime.tensor(data["x"], tvm.cpu(0))
    _, f, _ = _vm_main(spec)
    err = float(np.abs(f(x).numpy() - data["expected"]).max())
    if not err < 1e-3:
        raise SystemExit(f"WRONG RESULT: max abs error {err}")

    def loop(rng: range) -> None:
        for _ in rng:
            f(x)

    return Workload(calls_per_block(loop, spec["iters"]), lambda: f(x), report={"max_abs_error": err})


def llm_request(spec: dict[str, Any]) -> Workload:
    """One engine request on the tiny decoder with its paged KV cache (llm_bench): a block is a
    prefill of ``prompt`` tokens (ms) then ``decode`` one-token steps (ms per token)."""
    import numpy as np

    import tvm
    from tvm.runtime.vm import VirtualMachine

    with open(spec["meta"]) as f:
        cfg = json.load(f)["config"]
    data = np.load(spec["npz"])
    dev = tvm.cpu(0)
    params = [tvm.runtime.tensor(data[f"param_{i}"], dev) for i in range(spec["num_params"])]
    vm = VirtualMachine(tvm.runtime.load_module(spec["artifact"]), dev)
    S = tvm.runtime.ShapeTuple  # noqa: N806 (reads like the type it is)
    cache = paged_kv_cache(vm["create_tir_paged_kv_cache"], cfg, S)
    g = tvm.get_global_func
    add, remove = g("vm.builtin.kv_state_add_sequence"), g("vm.builtin.kv_state_remove_sequence")
    begin, end = g("vm.builtin.kv_state_begin_forward"), g("vm.builtin.kv_state_end_forward")
    prefill, decode = vm["prefill"], vm["decode"]
    rng = np.random.default_rng(0)
    emb = data["param_0"]  # the embedding table: rows are token embeddings
    prompt = tvm.runtime.tensor(emb[rng.integers(0, emb.shape[0], spec["prompt"])][None], dev)
    steps = [
        tvm.runtime.tensor(emb[t][None, None], dev) for t in rng.integers(0, emb.shape[0], spec["decode"])
    ]
    n_prompt, prompt_len, one = S([0]), S([spec["prompt"]]), S([1])

    def run_prefill() -> None:
        add(cache, 0)
        begin(cache, n_prompt, prompt_len)
        prefill(prompt, cache, params)
        end(cache)

    def run_decode() -> None:
        for x in steps:
            begin(cache, n_prompt, one)
            decode(x, cache, params)
            end(cache)

    def request() -> None:
        run_prefill()
        run_decode()
        remove(cache, 0)

    def block() -> dict[str, float]:
        t = now()
        run_prefill()
        t1 = now()
        run_decode()
        t2 = now()
        remove(cache, 0)
        return {"prefill_ms": (t1 - t) / 1e6, "decode_ms_per_token": (t2 - t1) / 1e6 / spec["decode"]}

    return Workload(block, request)


def tensor_cache_load(spec: dict[str, Any]) -> Workload:
    """``vm.builtin.tensor_cache.load(dir, cpu)``, the cache cleared before each (tensor_cache_bench);
    ``finish`` returns a checksum of every weight, compared across runtimes by the caller."""
    import numpy as np

    import tvm

    load = tvm.get_global_func("vm.builtin.tensor_cache.load")
    get = tvm.get_global_func("vm.builtin.tensor_cache.get")
    clear = tvm.get_global_func("vm.builtin.tensor_cache.clear")

    def block() -> dict[str, float]:
        clear()
        t = now()
        load(spec["dir"], 1, 0)
        return {"load_ms": (now() - t) / 1e6}

    def finish() -> dict[str, Any]:
        checksum = [float(np.float64(get(n).numpy()[::97, ::89].sum())) for n in spec["names"]]
        clear()
        return {"checksum": checksum}

    return Workload(block, lambda: None, finish)


MEASURED: dict[str, Callable[[dict[str, Any]], Workload]] = {
    "kernel_call": kernel_call,
    "vm_call": vm_call,
    "contrib_sort": contrib_sort,
    "model_x": model_x,
    "llm_request": llm_request,
    "tensor_cache_load": tensor_cache_load,
}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Set up, warm up, time ``blocks`` blocks with the collector off, finish."""
    work = MEASURED[spec["task"]](spec)
    for _ in range(spec.get("warmup", 0)):
        work.warmup_once()
    series: dict[str, list[float]] = {}
    gc.disable()
    try:
        for _ in range(spec["blocks"]):
            for key, value in work.block().items():
                series.setdefault(key, []).append(value)
    finally:
        gc.enable()
    return {**series, **work.report, **work.finish()}


# ----------------------------------------------------------------------------- one-shot tasks


def probe(spec: dict[str, Any]) -> dict[str, Any]:
    """Python version, tvm/numpy package versions and module origins, without importing tvm."""
    import importlib.metadata as md
    import importlib.util
    import platform

    pkgs = {}
    for d in md.distributions():
        name = d.metadata["Name"] or ""
        low = name.lower()
        if "tvm" in low or low == "numpy":
            pkgs[name] = d.version
    origins = {}
    for mod in ("tvm", "tvm_ffi"):
        s = importlib.util.find_spec(mod)
        origins[mod] = s.origin if s is not None else None
    return {
        "executable": sys.executable,
        "python_version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "packages": dict(sorted(pkgs.items())),
        "module_origins": origins,
    }


def write_tensor_cache(spec: dict[str, Any]) -> dict[str, Any]:
    """apache-tvm 0.27's own writer (tvm.contrib.tvmjs) makes the cache tensor_cache_bench loads."""
    import numpy as np

    from tvm.contrib import tvmjs

    rng = np.random.default_rng(0)
    params = {
        f"layers.{i}.weight": rng.standard_normal(spec["shape"], dtype=np.float32)
        for i in range(spec["count"])
    }
    tvmjs.dump_tensor_cache(
        params, spec["dir"], encode_format=spec["format"], shard_cap_mb=32, show_progress=False
    )
    return {"written": spec["dir"]}


ONE_SHOT: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "probe": probe,
    "write_tensor_cache": write_tensor_cache,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    task = spec.get("task")
    if task in ONE_SHOT:
        result = ONE_SHOT[task](spec)
    elif task in MEASURED:
        result = measure(spec)
    else:
        raise SystemExit(f"unknown task {task!r}; known: {sorted([*MEASURED, *ONE_SHOT])}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
