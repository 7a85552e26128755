"""Drive the tiny decoder of tests/artifacts/llm the way an LLM engine does: a paged KV cache from
the model's ``create_tir_paged_kv_cache``, ``vm.builtin.kv_state_*`` around every forward, greedy
sampling on the host.  The same calls work on apache-tvm 0.27's runtime (the generator records its
results with an equivalent runner), so this also serves the benchmark.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

LLM_DIR = Path(__file__).resolve().parents[1] / "artifacts" / "llm"


def load_expected() -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    meta = json.loads((LLM_DIR / "tiny_llama.json").read_text())
    with np.load(LLM_DIR / "tiny_llama.npz") as data:
        arrays = {k: data[k] for k in data.files}
    return meta, arrays


def library_path(target: str, tmp_dir: Path) -> Path:
    """The model library for `target` (the OpenCL one is stored gzip-compressed)."""
    plain = LLM_DIR / f"tiny_llama_{target}.so"
    if plain.exists():
        return plain
    out = tmp_dir / plain.name
    partial = tmp_dir / (plain.name + ".partial")
    with gzip.open(LLM_DIR / f"tiny_llama_{target}.so.gz", "rb") as src, open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst)
    # A new file (new inode) replaces any earlier copy: a library still loaded from it keeps its
    # mapping intact (overwriting a loaded .so in place crashes its process).
    os.replace(partial, out)
    return out


class Engine:
    """One model + one KV cache on one device."""

    def __init__(
        self, tvm: Any, lib: Path, dev: Any, weights: list[np.ndarray], config: dict, sliding_window: int = 0
    ):
        self.tvm = tvm
        self.dev = dev
        self.vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(lib)), dev)
        self.params = [tvm.runtime.tensor(w, dev) for w in weights]
        shape = tvm.runtime.ShapeTuple
        self.cache = self.vm["create_tir_paged_kv_cache"](
            shape([config["max_batch_size"]]),
            shape([config["max_total_seq_len"]]),
            shape([config["prefill_chunk_size"]]),
            shape([config["page_size"]]),
            shape([sliding_window]),
        )
        g = tvm.get_global_func
        self.add_sequence = lambda i: g("vm.builtin.kv_state_add_sequence")(self.cache, i)
        self.remove_sequence = lambda i: g("vm.builtin.kv_state_remove_sequence")(self.cache, i)
        self.fork_sequence = lambda p, c, pos: g("vm.builtin.kv_state_fork_sequence")(self.cache, p, c, pos)
        self.popn = lambda i, n: g("vm.builtin.kv_state_popn")(self.cache, i, n)
        self._begin = g("vm.builtin.kv_state_begin_forward")
        self._end = g("vm.builtin.kv_state_end_forward")

    def cache_call(self, name: str, *args: Any) -> Any:
        return self.tvm.get_global_func(f"vm.builtin.attention_kv_cache_{name}")(self.cache, *args)

    def _embed(self, tokens: list[int]) -> Any:
        ids = self.tvm.runtime.tensor(np.array(tokens, "int32"), self.dev)
        return self.vm["embed"](ids, self.params)

    def _forward(self, fn: str, ids: list[int], lengths: list[int], tokens: list[int], shape):
        shape_tuple = self.tvm.runtime.ShapeTuple
        self._begin(self.cache, shape_tuple(ids), shape_tuple(lengths))
        emb = self._embed(tokens).numpy().reshape(shape)
        logits, _ = self.vm[fn](self.tvm.runtime.tensor(emb, self.dev), self.cache, self.params)
        self._end(self.cache)
        return logits.numpy()

    def prefill(self, seqs: dict[int, list[int]]) -> np.ndarray:
        """Prefill several sequences in one forward: logits of every token, [tokens, vocab]."""
        ids = list(seqs)
        tokens = [t for i in ids for t in seqs[i]]
        lengths = [len(seqs[i]) for i in ids]
        return self._forward("prefill", ids, lengths, tokens, (1, len(tokens), -1))[0]

    def decode(self, seqs: dict[int, int]) -> np.ndarray:
        """One token for each sequence in one forward: [batch, vocab]."""
        ids = list(seqs)
        tokens = [seqs[i] for i in ids]
        return self._forward("decode", ids, [1] * len(ids), tokens, (len(ids), 1, -1))[:, 0]

    def greedy(self, seq_id: int, prompt: list[int], steps: int) -> tuple[list[int], np.ndarray]:
        self.add_sequence(seq_id)
        logits = [self.prefill({seq_id: prompt})[-1]]
        tokens = [int(np.argmax(logits[-1]))]
        for _ in range(steps - 1):
            logits.append(self.decode({seq_id: tokens[-1]})[0])
            tokens.append(int(np.argmax(logits[-1])))
        return tokens, np.stack(logits)


def weights_of(arrays: dict[str, np.ndarray]) -> list[np.ndarray]:
    n = sum(1 for k in arrays if k.startswith("param_"))
    return [arrays[f"param_{i}"] for i in range(n)]
