"""Helpers for the Disco tests: the artifacts apache-tvm 0.27 compiled for them
(tests/artifacts/disco, see generate_disco.py), sessions of every kind shared within a test
module, and the greedy decoding loop of the tensor-parallel decoder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import tvm_ffi

from conftest import ARTIFACTS
from tvm.backend.extra import disco

DISCO = ARTIFACTS / "disco"
COLLECTIVES = DISCO / "collectives_cpu.so"
DECODER = DISCO / "tiny_decoder_cpu.so"
DECODER_TP2 = DISCO / "tiny_decoder_tp2_cpu.so"
WEIGHTS = DISCO / "weights"
WEIGHTS_PRESHARDED = DISCO / "weights_presharded"
HERE = str(Path(__file__).resolve().parent)
KINDS = ("threaded", "process", "socket")


def data() -> Any:
    return np.load(DISCO / "collectives.npz")


def decoder_reference() -> tuple[dict[str, Any], Any]:
    return json.loads((DISCO / "tiny_decoder.json").read_text()), np.load(DISCO / "tiny_decoder.npz")


def open_session(kind: str, num_workers: int, num_groups: int = 1) -> disco.Session:
    """A session whose workers can import disco_helpers (PYTHONPATH is inherited)."""
    path = os.environ.get("PYTHONPATH", "")
    if HERE not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, path) if p)
    if kind == "threaded":
        sess = disco.ThreadedSession(num_workers, num_groups)
    elif kind == "process":
        sess = disco.ProcessSession(num_workers, num_groups)
    else:  # two "machines": this one and a node started with tvm.exec.disco_remote_socket_session
        sess = disco.SocketSession(
            2, num_workers // 2, num_groups, launch_local_nodes=True, connect_timeout_s=120
        )
    sess.import_python_module("disco_helpers")
    return sess


class SessionPool:
    """Sessions shared by the tests of a module (starting processes is what costs)."""

    def __init__(self) -> None:
        self._sessions: dict[tuple, disco.Session] = {}

    def get(self, kind: str, num_workers: int, num_groups: int = 1) -> disco.Session:
        key = (kind, num_workers, num_groups)
        sess = self._sessions.get(key)
        if sess is None or sess._failure is not None:
            sess = self._sessions[key] = open_session(kind, num_workers, num_groups)
        return sess

    def close(self) -> None:
        for sess in self._sessions.values():
            sess.shutdown()


def put(sess: disco.Session, values: list[np.ndarray]) -> disco.DRef:
    """A DRef holding values[i] on worker i."""
    ref = sess.empty(values[0].shape, str(values[0].dtype))
    for i, v in enumerate(values):
        ref.debug_copy_from(i, v)
    return ref


def on_every_worker(sess: disco.Session, ref: disco.DRef) -> list[np.ndarray]:
    return [ref.debug_get_from_remote(i).numpy() for i in range(sess.num_workers)]


def shape(*dims: int) -> tvm_ffi.Shape:
    return tvm_ffi.Shape(list(dims))


def load_decoder_params(sess: disco.Session, mod: disco.DModule, presharded: bool) -> disco.DRef:
    """The tp2 decoder's weights on every worker, through runtime.disco.ShardLoader: scattered
    from worker 0 by the shard functions of the model library, or read presharded."""
    cache = WEIGHTS_PRESHARDED if presharded else WEIGHTS
    metadata = (cache / "tensor-cache.json").read_text()
    shard_info = "" if presharded else (cache / "shard_info.json").read_text()
    loader = sess.get_global_func("runtime.disco.ShardLoader")(
        str(cache / "tensor-cache.json"), metadata, shard_info, mod
    )
    load = "runtime.disco.ShardLoaderLoadAllPresharded" if presharded else "runtime.disco.ShardLoaderLoadAll"
    return sess.get_global_func(load)(loader)


def greedy_decode(
    sess: disco.Session,
    lib: Path,
    params: disco.DRef | None,
    prompt: list[int],
    steps: int,
    mod: disco.DModule | None = None,
) -> tuple[list[int], np.ndarray]:
    """Greedy generation on every worker of `sess` with the paged KV cache; the logits come from
    worker 0 (every worker computes the same after the allreduce)."""
    import tvm

    config, _ = decoder_reference()
    cfg = config["config"]
    mod = mod or sess.load_vm_module(str(lib))
    g = sess.get_global_func
    cache = mod["create_tir_paged_kv_cache"](
        shape(cfg["max_batch_size"]),
        shape(cfg["max_total_seq_len"]),
        shape(cfg["prefill_chunk_size"]),
        shape(cfg["page_size"]),
        shape(0),
    )
    g("vm.builtin.kv_state_add_sequence")(cache, 0)
    begin, end = g("vm.builtin.kv_state_begin_forward"), g("vm.builtin.kv_state_end_forward")
    view, item = g("runtime.TVMTensorCreateView"), g("ffi.ArrayGetItem")
    hidden, vocab = cfg["hidden_size"], cfg["vocab_size"]

    def step(tokens: list[int]) -> np.ndarray:
        begin(cache, shape(0), shape(len(tokens)))
        ids = sess.broadcast(np.array(tokens, "int32"))
        emb = view(mod["embed"](ids, params), shape(1, len(tokens), hidden), "float32", 0)
        out = mod["prefill" if len(tokens) > 1 else "decode"](emb, cache, params)
        end(cache)
        logits = tvm.runtime.empty((1, len(tokens), vocab), "float32")
        sess.copy_from_worker_0(logits, item(out, 0))
        return logits.numpy()[0, -1]

    logits = [step(prompt)]
    tokens = [int(np.argmax(logits[-1]))]
    for _ in range(steps - 1):
        logits.append(step([tokens[-1]]))
        tokens.append(int(np.argmax(logits[-1])))
    return tokens, np.stack(logits)
