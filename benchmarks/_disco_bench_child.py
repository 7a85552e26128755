"""Our side of benchmarks/disco_bench.py, run in the venv with tvm-runtime-extra:

python _disco_bench_child.py allreduce KIND WORKERS PLAN_JSON REPEATS
    -> {"<bytes>": [seconds per call, ...]} (worker 0's loop, one value per repeat)
python _disco_bench_child.py decode ARTIFACTS_DIR STEPS
    -> {"<variant>": [milliseconds per decoded token, ...]}
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import tvm_ffi
from _child import paged_kv_cache

import tvm
from tvm.backend.extra import disco


def _session(kind: str, workers: int) -> disco.Session:
    sess = disco.ThreadedSession(workers) if kind == "threaded" else disco.ProcessSession(workers)
    sess.import_python_module("_disco_bench_worker")
    return sess


def allreduce(kind: str, workers: int, plan: list, repeats: int) -> dict:
    sess = _session(kind, workers)
    loop = sess.get_global_func("bench.disco.allreduce_loop")
    ones = sess.get_global_func("runtime.disco.empty")
    out = {}
    for nbytes, iters in plan:
        x = ones(tvm_ffi.Shape([nbytes // 4]), "float32", None, False, True)
        y = sess.empty((nbytes // 4,), "float32")
        loop(x, y, 2)
        samples = []
        for _ in range(repeats):
            elapsed = loop(x, y, iters)
            samples.append(float(elapsed.debug_get_from_remote(0)) / iters)
        out[str(nbytes)] = samples
    sess.shutdown()
    return out


def _weights(cache: Path) -> list[np.ndarray]:
    index = json.loads((cache / "tensor-cache.json").read_text())
    out = {}
    for shard in index["records"]:
        raw = (cache / shard["dataPath"]).read_bytes()
        for rec in shard["records"]:
            data = np.frombuffer(
                raw, dtype=rec["dtype"], count=int(np.prod(rec["shape"])), offset=rec["byteOffset"]
            )
            out[rec["name"]] = data.reshape(rec["shape"])
    return [out[f"param_{i}"] for i in range(len(out))]


def _time_decoding(step, prompt: list[int], steps: int) -> list[float]:
    """Milliseconds of each greedy decode step after the prompt's prefill."""
    token = step(prompt)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        token = step([token])
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def _unsharded(artifacts: Path, config: dict, prompt: list[int], steps: int) -> list[float]:
    """The unsharded decoder on one VirtualMachine: the alternative to sharding it."""
    dev = tvm.cpu()
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(artifacts / "tiny_decoder_cpu.so")), dev)
    params = [tvm.runtime.tensor(w, dev) for w in _weights(artifacts / "weights")]
    s = tvm_ffi.Shape
    cfg = config["config"]
    cache = paged_kv_cache(vm["create_tir_paged_kv_cache"], cfg, s)
    g = tvm.get_global_func
    g("vm.builtin.kv_state_add_sequence")(cache, 0)
    begin, end = g("vm.builtin.kv_state_begin_forward"), g("vm.builtin.kv_state_end_forward")

    def step(tokens: list[int]) -> int:
        begin(cache, s([0]), s([len(tokens)]))
        emb = vm["embed"](tvm.runtime.tensor(np.array(tokens, "int32"), dev), params)
        emb = emb._create_view((1, len(tokens), cfg["hidden_size"]))
        logits, _ = vm["prefill" if len(tokens) > 1 else "decode"](emb, cache, params)
        end(cache)
        return int(np.argmax(logits.numpy()[0, -1]))

    return _time_decoding(step, prompt, steps)


def _sharded(kind: str, artifacts: Path, config: dict, prompt: list[int], steps: int) -> list[float]:
    """The 2-shard decoder on a session: every step broadcasts the token, runs embed and decode
    on both workers (two allreduces per layer) and brings worker 0's logits back."""
    sess = _session(kind, 2)
    s = tvm_ffi.Shape
    cfg = config["config"]
    mod = sess.load_vm_module(str(artifacts / "tiny_decoder_tp2_cpu.so"))
    cache_dir = artifacts / "weights"
    loader = sess.get_global_func("runtime.disco.ShardLoader")(
        str(cache_dir / "tensor-cache.json"),
        (cache_dir / "tensor-cache.json").read_text(),
        (cache_dir / "shard_info.json").read_text(),
        mod,
    )
    params = sess.get_global_func("runtime.disco.ShardLoaderLoadAll")(loader)
    g = sess.get_global_func
    cache = paged_kv_cache(mod["create_tir_paged_kv_cache"], cfg, s)
    g("vm.builtin.kv_state_add_sequence")(cache, 0)
    begin, end = g("vm.builtin.kv_state_begin_forward"), g("vm.builtin.kv_state_end_forward")
    view, item = g("runtime.TVMTensorCreateView"), g("ffi.ArrayGetItem")
    vocab, hidden = cfg["vocab_size"], cfg["hidden_size"]

    def step(tokens: list[int]) -> int:
        begin(cache, s([0]), s([len(tokens)]))
        ids = sess.broadcast(np.array(tokens, "int32"))
        emb = view(mod["embed"](ids, params), s([1, len(tokens), hidden]), "float32", 0)
        out = mod["prefill" if len(tokens) > 1 else "decode"](emb, cache, params)
        end(cache)
        logits = tvm.runtime.empty((1, len(tokens), vocab), "float32")
        sess.copy_from_worker_0(logits, item(out, 0))
        return int(np.argmax(logits.numpy()[0, -1]))

    times = _time_decoding(step, prompt, steps)
    sess.shutdown()
    return times


def decode(artifacts: Path, steps: int) -> dict:
    config = json.loads((artifacts / "tiny_decoder.json").read_text())
    prompt = np.load(artifacts / "tiny_decoder.npz")["prompt"].tolist()
    return {
        "unsharded (one VirtualMachine)": _unsharded(artifacts, config, prompt, steps),
        "2 shards, ThreadedSession": _sharded("threaded", artifacts, config, prompt, steps),
        "2 shards, ProcessSession": _sharded("process", artifacts, config, prompt, steps),
    }


if __name__ == "__main__":
    if sys.argv[1] == "allreduce":
        result = allreduce(sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5]))
    else:
        result = decode(Path(sys.argv[2]), int(sys.argv[3]))
    print(json.dumps(result))
