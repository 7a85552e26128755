"""Generate the language-model fixtures under ``tests/artifacts/llm`` (paged KV cache builtins).

Run it with a Python that has ``apache-tvm==0.27.0.post1`` (see ``README.md`` here)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_llm.py [--out DIR] [--targets cpu,opencl]

What it writes (fixed seeds: the npz is byte-identical from run to run; the compiled libraries
are not, 0.27's code generation orders some functions differently):

* ``tiny_llama_cpu.so`` / ``tiny_llama_opencl.so.gz``: a 2-layer decoder (RMSNorm, fused-QKV
  attention through ``TIRPagedKVCache`` with RoPE, SiLU-gated MLP) built with
  ``tvm.relax.frontend.nn`` and ``export_tvm`` (packed params), compiled by ``tvm.compile`` for
  ``llvm`` and ``opencl``.  Functions: ``embed``, ``prefill``, ``decode``,
  ``create_tir_paged_kv_cache``.
* ``rnn_state_kernels_cpu.so``: getter/setter kernels for ``vm.builtin.rnn_state_create``.
* ``tiny_llama.npz``: the weights (``param_<i>``, in the order of the packed params tuple, names in
  ``tiny_llama.json``), the prompts, and what apache-tvm 0.27's own runtime produced on cpu:
  greedy tokens and the logits of every step; two sequences prefilled and decoded in one batch;
  fork, popn, remove and sliding-window scenarios (``record_scenarios``); the RNN-state scenario
  (``record_rnn``) and the non-paged KV cache scenario (``tests/llm/legacy_cache_scenario.py``).

Every expectation is recorded from apache-tvm's runtime (``relax.VirtualMachine`` plus its
``vm.builtin.kv_state_*`` functions), which is the behaviour our runtime must reproduce.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op, spec
from tvm.relax.frontend.nn.llm.kv_cache import PagedKVCache, RopeMode, TIRPagedKVCache

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import save_npz  # noqa: E402  (same directory; byte-deterministic npz)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from legacy_cache_scenario import legacy_cache_scenario  # noqa: E402  (shared with the tests)

CONFIG = {
    "vocab_size": 96,
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_layers": 2,
    "num_heads": 4,
    "num_kv_heads": 2,
    "head_dim": 16,
    "page_size": 16,
    "rope_theta": 10000,
    "max_batch_size": 4,
    "max_total_seq_len": 256,
    "prefill_chunk_size": 64,
}
SEED = 20261125
PROMPT = [3, 17, 42, 5, 77, 11, 29, 64, 8, 50, 23, 90, 1, 36, 71, 14, 58, 9]  # 18 tokens: 2 pages
PROMPT_B = [60, 2, 33, 47, 19]
GEN_STEPS = 12


class Attention(nn.Module):
    def __init__(self, cfg: dict) -> None:
        self.cfg = cfg
        d = cfg["head_dim"]
        qkv_out = (cfg["num_heads"] + 2 * cfg["num_kv_heads"]) * d
        self.qkv_proj = nn.Linear(cfg["hidden_size"], qkv_out, bias=False)
        self.o_proj = nn.Linear(cfg["num_heads"] * d, cfg["hidden_size"], bias=False)

    def forward(self, x: nn.Tensor, cache: PagedKVCache, layer_id: int) -> nn.Tensor:
        cfg = self.cfg
        b, s, _ = x.shape
        d, h = cfg["head_dim"], cfg["num_heads"]
        qkv = op.reshape(self.qkv_proj(x), (b, s, h + 2 * cfg["num_kv_heads"], d))
        out = cache.attention_with_fused_qkv(layer_id, qkv, h, sm_scale=d**-0.5)
        return self.o_proj(op.reshape(out, (b, s, h * d)))


class MLP(nn.Module):
    def __init__(self, cfg: dict) -> None:
        self.gate_up = nn.Linear(cfg["hidden_size"], 2 * cfg["intermediate_size"], bias=False)
        self.down = nn.Linear(cfg["intermediate_size"], cfg["hidden_size"], bias=False)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        gate, up = op.split(self.gate_up(x), 2, axis=-1)
        return self.down(op.silu(gate) * up)


class Layer(nn.Module):
    def __init__(self, cfg: dict, layer_id: int) -> None:
        self.layer_id = layer_id
        self.attn_norm = nn.RMSNorm(cfg["hidden_size"], -1, 1e-5, bias=False)
        self.attn = Attention(cfg)
        self.mlp_norm = nn.RMSNorm(cfg["hidden_size"], -1, 1e-5, bias=False)
        self.mlp = MLP(cfg)

    def forward(self, x: nn.Tensor, cache: PagedKVCache) -> nn.Tensor:
        x = x + self.attn(self.attn_norm(x), cache, self.layer_id)
        return x + self.mlp(self.mlp_norm(x))


class TinyLlama(nn.Module):
    def __init__(self, cfg: dict, target: tvm.target.Target) -> None:
        self.cfg = cfg
        self.target = target
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList([Layer(cfg, i) for i in range(cfg["num_layers"])])
        self.norm = nn.RMSNorm(cfg["hidden_size"], -1, 1e-5, bias=False)
        self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)

    def _logits(self, x: nn.Tensor, cache: PagedKVCache) -> nn.Tensor:
        for layer in self.layers:
            x = layer(x, cache)
        return self.lm_head(self.norm(x))

    def embed(self, input_ids: nn.Tensor) -> nn.Tensor:
        return self.embed_tokens(input_ids)

    def prefill(self, input_embed: nn.Tensor, cache: PagedKVCache):
        return self._logits(input_embed, cache), cache

    def decode(self, input_embed: nn.Tensor, cache: PagedKVCache):
        return self._logits(input_embed, cache), cache

    def create_tir_paged_kv_cache(
        self, max_batch_size, max_total_seq_len, prefill_chunk_size, page_size, support_sliding_window
    ) -> PagedKVCache:
        cfg = self.cfg
        sizes = (max_batch_size, max_total_seq_len, prefill_chunk_size, page_size, support_sliding_window)
        return tir_paged_kv_cache(cfg, self.target, cfg["num_heads"], cfg["num_kv_heads"], *sizes)


def tir_paged_kv_cache(
    cfg: dict,
    target: tvm.target.Target,
    num_heads: int,
    num_kv_heads: int,
    max_batch_size,
    max_total_seq_len,
    prefill_chunk_size,
    page_size,
    support_sliding_window,
) -> PagedKVCache:
    """The float32 TIRPagedKVCache of the decoders here (also generate_disco.py's, whose shards
    hold part of the heads)."""
    d = cfg["head_dim"]
    return TIRPagedKVCache(
        attn_kind="mha",
        max_batch_size=max_batch_size,
        max_total_seq_len=max_total_seq_len,
        prefill_chunk_size=prefill_chunk_size,
        page_size=page_size,
        support_sliding_window=support_sliding_window,
        layer_partition=relax.ShapeExpr([0, cfg["num_layers"]]),
        num_hidden_layers=cfg["num_layers"],
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        qk_head_dim=d,
        v_head_dim=d,
        mla_original_qk_head_dim=0,
        mla_original_v_head_dim=0,
        rope_mode=RopeMode.NORMAL,
        rope_scale=1,
        rope_theta=cfg["rope_theta"],
        rope_scaling={},
        rope_ext_factors=relax.prim_value(0),
        rotary_dim=d,
        enable_disaggregation=False,
        dtype="float32",
        target=target,
    )


def decoder_spec(hidden: int) -> dict:
    """export_tvm's spec of the decoders' functions: embed, prefill, decode and the cache."""
    packed = {"param_mode": "packed", "effect_mode": "none"}
    cache_spec = spec.Object(object_type=PagedKVCache)
    return {
        "embed": {"input_ids": spec.Tensor(["seq_len"], "int32"), "$": packed},
        "prefill": {
            "input_embed": spec.Tensor([1, "seq_len", hidden], "float32"),
            "cache": cache_spec,
            "$": packed,
        },
        "decode": {
            "input_embed": spec.Tensor(["batch_size", 1, hidden], "float32"),
            "cache": cache_spec,
            "$": packed,
        },
        "create_tir_paged_kv_cache": {
            "max_batch_size": int,
            "max_total_seq_len": int,
            "prefill_chunk_size": int,
            "page_size": int,
            "support_sliding_window": int,
            "$": {"param_mode": "none", "effect_mode": "none"},
        },
    }


def export(cfg: dict, target: tvm.target.Target):
    model = TinyLlama(cfg, target)
    model.to("float32")
    return model.export_tvm(spec=decoder_spec(cfg["hidden_size"]))


def make_weights(named_params, seed: int = SEED) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = []
    for name, param in named_params:
        shape = [int(s) for s in param.shape]
        if "norm" in name:
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            w = rng.standard_normal(shape) / np.sqrt(shape[-1])
        weights.append(w.astype("float32"))
    return weights


class Runner:
    """Greedy generation on apache-tvm 0.27's runtime, the reference behaviour."""

    def __init__(self, lib_path: Path, weights: list[np.ndarray], sliding_window: int = 0) -> None:
        self.dev = tvm.cpu()
        self.vm = relax.VirtualMachine(tvm.runtime.load_module(str(lib_path)), self.dev)
        self.params = [tvm.runtime.tensor(w, self.dev) for w in weights]
        cfg = CONFIG
        shape = tvm.runtime.ShapeTuple
        self.cache = self.vm["create_tir_paged_kv_cache"](
            shape([cfg["max_batch_size"]]),
            shape([cfg["max_total_seq_len"]]),
            shape([cfg["prefill_chunk_size"]]),
            shape([cfg["page_size"]]),
            shape([sliding_window]),
        )
        g = tvm.get_global_func
        self.add_seq = g("vm.builtin.kv_state_add_sequence")
        self.remove_seq = g("vm.builtin.kv_state_remove_sequence")
        self.fork_seq = g("vm.builtin.kv_state_fork_sequence")
        self.popn = g("vm.builtin.kv_state_popn")
        self.begin = g("vm.builtin.kv_state_begin_forward")
        self.end = g("vm.builtin.kv_state_end_forward")

    def embed(self, tokens: list[int]):
        return self.vm["embed"](tvm.runtime.tensor(np.array(tokens, "int32"), self.dev), self.params)

    def prefill(self, seqs: dict[int, list[int]]) -> np.ndarray:
        """Prefill several sequences in one forward; returns the logits of every token."""
        ids = list(seqs)
        tokens = [t for i in ids for t in seqs[i]]
        self.begin(
            self.cache, tvm.runtime.ShapeTuple(ids), tvm.runtime.ShapeTuple([len(seqs[i]) for i in ids])
        )
        emb = self.embed(tokens).numpy().reshape(1, len(tokens), -1)
        logits, _ = self.vm["prefill"](tvm.runtime.tensor(emb, self.dev), self.cache, self.params)
        self.end(self.cache)
        return logits.numpy()[0]

    def decode(self, seqs: dict[int, int]) -> np.ndarray:
        """One decode step for several sequences (one token each); returns [batch, vocab]."""
        ids = list(seqs)
        self.begin(self.cache, tvm.runtime.ShapeTuple(ids), tvm.runtime.ShapeTuple([1] * len(ids)))
        emb = self.embed([seqs[i] for i in ids]).numpy().reshape(len(ids), 1, -1)
        logits, _ = self.vm["decode"](tvm.runtime.tensor(emb, self.dev), self.cache, self.params)
        self.end(self.cache)
        return logits.numpy()[:, 0]

    def greedy(self, seq_id: int, prompt: list[int], steps: int) -> tuple[list[int], np.ndarray]:
        self.add_seq(self.cache, seq_id)
        logits = [self.prefill({seq_id: prompt})[-1]]
        tokens = [int(np.argmax(logits[-1]))]
        for _ in range(steps - 1):
            logits.append(self.decode({seq_id: tokens[-1]})[0])
            tokens.append(int(np.argmax(logits[-1])))
        return tokens, np.stack(logits)


def record_scenarios(lib_path: Path, weights: list[np.ndarray]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    # 1. one sequence, greedy.
    r = Runner(lib_path, weights)
    tokens, logits = r.greedy(0, PROMPT, GEN_STEPS)
    out["greedy_tokens"] = np.array(tokens, "int32")
    out["greedy_logits"] = logits.astype("float32")
    r2 = Runner(lib_path, weights)
    r2.add_seq(r2.cache, 0)
    out["prefill_logits"] = r2.prefill({0: PROMPT}).astype("float32")
    r2.add_seq(r2.cache, 1)
    out["prefill_logits_b"] = r2.prefill({1: PROMPT_B}).astype("float32")

    # 2. two sequences prefilled in one batch, then decoded together (greedy each).
    r = Runner(lib_path, weights)
    r.add_seq(r.cache, 0)
    r.add_seq(r.cache, 1)
    pl = r.prefill({0: PROMPT, 1: PROMPT_B})
    last = {0: pl[len(PROMPT) - 1], 1: pl[-1]}
    toks = {i: [int(np.argmax(last[i]))] for i in (0, 1)}
    blog = [np.stack([last[0], last[1]])]
    for _ in range(GEN_STEPS - 1):
        lg = r.decode({0: toks[0][-1], 1: toks[1][-1]})
        blog.append(lg)
        for j, i in enumerate((0, 1)):
            toks[i].append(int(np.argmax(lg[j])))
    out["batch_tokens"] = np.array([toks[0], toks[1]], "int32")
    out["batch_logits"] = np.stack(blog).astype("float32")  # [step, 2, vocab]

    # 3. fork: prefill seq 0 with the prompt, fork seq 5 from it (all tokens), decode both with
    #    different next tokens; then fork seq 6 from seq 0 at position 7 and prefill PROMPT_B on it.
    r = Runner(lib_path, weights)
    r.add_seq(r.cache, 0)
    r.prefill({0: PROMPT})
    r.fork_seq(r.cache, 0, 5, -1)
    fork_decode = r.decode({0: 4, 5: 44})
    r.fork_seq(r.cache, 0, 6, 7)
    fork_prefill = r.prefill({6: PROMPT_B})
    out["fork_decode_logits"] = fork_decode.astype("float32")
    out["fork_prefill_logits"] = fork_prefill.astype("float32")

    # 4. popn: prefill the prompt, pop 5 tokens, decode one token; remove: a second sequence is
    #    removed and its pages reused by a new one.
    r = Runner(lib_path, weights)
    r.add_seq(r.cache, 0)
    r.prefill({0: PROMPT})
    r.popn(r.cache, 0, 5)
    out["popn_decode_logits"] = r.decode({0: PROMPT[len(PROMPT) - 5]}).astype("float32")
    r.add_seq(r.cache, 1)
    r.prefill({1: PROMPT_B})
    r.remove_seq(r.cache, 1)
    r.add_seq(r.cache, 2)
    out["remove_prefill_logits"] = r.prefill({2: PROMPT_B[:3]}).astype("float32")
    out["remove_decode_logits"] = r.decode({0: 7, 2: 9}).astype("float32")

    # 5. sliding window: a cache created with support_sliding_window=1; sequence 0 keeps a window
    #    of 24 tokens with 4 attention sinks, sequence 1 none.  Greedy decoding of sequence 0 slides
    #    its window (one token at a time), then one 10-token prefill slides it by a whole chunk.
    r = Runner(lib_path, weights, sliding_window=1)
    r.add_seq(r.cache, 0)
    r.add_seq(r.cache, 1)
    tvm.get_global_func("vm.builtin.attention_kv_cache_enable_sliding_window_for_seq")(r.cache, 0, 24, 4)
    logits = [r.prefill({0: PROMPT, 1: PROMPT_B})[len(PROMPT) - 1]]
    token = int(np.argmax(logits[-1]))
    for _ in range(GEN_STEPS - 1):
        step = r.decode({0: token, 1: 5})
        logits.append(step[0])
        token = int(np.argmax(step[0]))
    out["sliding_decode_logits"] = np.stack(logits).astype("float32")
    out["sliding_prefill_logits"] = r.prefill({0: PROMPT[:10]}).astype("float32")
    seq_len = tvm.get_global_func("vm.builtin.attention_kv_cache_get_sequence_length")
    out["sliding_lengths"] = np.array([seq_len(r.cache, i) for i in (0, 1)], "int64")
    return out


# ----------------------------------------------------------------------------- RNN state

RNN_LAYERS, RNN_SEQS, RNN_HISTORY = 2, 3, 3
RNN_STATE_SIZES = (4, 6)  # two states per layer, 1-D, float32


def rnn_state_kernels(size: int):
    """Getter and setter of one RNN state, the calling convention of vm.builtin.rnn_state_*:
    (storage[seqs, history, size], seq_slot_ids[b], history_slot_ids[b], data[b, size]).  The
    getter reads each sequence's current entry; the setter writes the next one."""
    from tvm.script import tirx as T  # noqa: N812  (the TVMScript convention)

    @T.prim_func(s_tir=True)
    def get(var_storage: T.handle, var_slots: T.handle, var_hist: T.handle, var_out: T.handle):
        n_seq, batch = T.int32(), T.int32()
        storage = T.match_buffer(var_storage, (n_seq, RNN_HISTORY, size), "float32")
        slots = T.match_buffer(var_slots, (batch,), "int32")
        hist = T.match_buffer(var_hist, (batch,), "int32")
        out = T.match_buffer(var_out, (batch, size), "float32")
        for b, i in T.grid(batch, size):
            with T.sblock("get"):
                vb, vi = T.axis.remap("SS", [b, i])
                out[vb, vi] = storage[slots[vb], hist[vb], vi]

    @T.prim_func(s_tir=True)
    def set_(var_storage: T.handle, var_slots: T.handle, var_hist: T.handle, var_data: T.handle):
        n_seq, batch = T.int32(), T.int32()
        storage = T.match_buffer(var_storage, (n_seq, RNN_HISTORY, size), "float32")
        slots = T.match_buffer(var_slots, (batch,), "int32")
        hist = T.match_buffer(var_hist, (batch,), "int32")
        data = T.match_buffer(var_data, (batch, size), "float32")
        for b, i in T.grid(batch, size):
            with T.sblock("set"):
                vb, vi = T.axis.remap("SS", [b, i])
                storage[slots[vb], (hist[vb] + 1) % RNN_HISTORY, vi] = data[vb, vi]

    return get, set_


def build_rnn_kernels(out: Path) -> Path:
    funcs = {}
    for size in RNN_STATE_SIZES:
        get, set_ = rnn_state_kernels(size)
        funcs[f"rnn_get_{size}"] = get.with_attr("global_symbol", f"rnn_get_{size}")
        funcs[f"rnn_set_{size}"] = set_.with_attr("global_symbol", f"rnn_set_{size}")
    lib = tvm.compile(tvm.IRModule(funcs), target="llvm")
    path = out / "rnn_state_kernels_cpu.so"
    lib.export_library(str(path), options=["-s"])
    return path


def record_rnn(path: Path) -> dict[str, np.ndarray]:
    """One scenario on apache-tvm's RNN state; every value read back is recorded."""
    mod = tvm.runtime.load_module(str(path))
    g = tvm.get_global_func
    init = [tvm.runtime.tensor(np.full(n, 0.5 * (k + 1), "float32")) for k, n in enumerate(RNN_STATE_SIZES)]
    state = g("vm.builtin.rnn_state_create")(
        RNN_LAYERS,
        RNN_SEQS,
        RNN_HISTORY,
        [mod[f"rnn_get_{n}"] for n in RNN_STATE_SIZES],
        [mod[f"rnn_set_{n}"] for n in RNN_STATE_SIZES],
        init,
    )
    shape = tvm.runtime.ShapeTuple
    rng = np.random.default_rng(SEED + 1)
    out: dict[str, np.ndarray] = {}
    reads: list[np.ndarray] = []

    def step(ids: list[int], lengths: list[int], write: bool) -> None:
        g("vm.builtin.kv_state_begin_forward")(state, shape(ids), shape(lengths))
        for layer in range(RNN_LAYERS):
            for k, n in enumerate(RNN_STATE_SIZES):
                got = tvm.runtime.empty((len(ids), n), "float32")
                g("vm.builtin.rnn_state_get")(state, layer, k, got)
                reads.append(got.numpy().ravel())
                if write:
                    data = rng.standard_normal((len(ids), n)).astype("float32")
                    g("vm.builtin.rnn_state_set")(state, layer, k, tvm.runtime.tensor(data))
        g("vm.builtin.kv_state_end_forward")(state)

    g("vm.builtin.kv_state_add_sequence")(state, 0)
    g("vm.builtin.kv_state_add_sequence")(state, 1)
    step([0, 1], [4, 1], True)  # a prefill of 4 tokens and a decode step
    step([1, 0], [1, 1], True)
    step([0], [1], True)
    g("vm.builtin.kv_state_fork_sequence")(state, 0, 2, -1)
    g("vm.builtin.kv_state_popn")(state, 0, 2)
    step([0, 2, 1], [1, 1, 1], False)
    g("vm.builtin.kv_state_remove_sequence")(state, 1)
    g("vm.builtin.kv_state_add_sequence")(state, 7)
    step([7, 2], [1, 1], False)
    debug = g("vm.builtin.rnn_state_debug_get")(state, 1, 1, 2)
    out["rnn_reads"] = np.concatenate(reads).astype("float32")
    out["rnn_debug_get_l1_s1_seq2"] = debug.numpy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "llm")
    ap.add_argument("--targets", default="cpu,opencl")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    targets = {"cpu": tvm.target.Target("llvm"), "opencl": tvm.target.Target("opencl", host="llvm")}
    weights = None
    for name in args.targets.split(","):
        target = targets[name]
        mod, named_params = export(CONFIG, target)
        if weights is None:
            weights = make_weights(named_params)
            param_names = [n for n, _ in named_params]
        with target:
            ex = tvm.compile(mod, target=target)
        path = args.out / f"tiny_llama_{name}.so"
        # Stripped at link time (only the dynamic symbols are needed to load it).
        ex.export_library(str(path), options=["-s"])
        if name != "cpu":
            # The OpenCL source of every attention kernel makes the library ~1.5 MB: store it
            # gzip-compressed (deterministic: no name, mtime 0); tests decompress it.
            packed = path.with_suffix(".so.gz")
            with open(path, "rb") as src, open(packed, "wb") as raw:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
                    gz.write(src.read())
            path.unlink()
            path = packed
        print("wrote", path, path.stat().st_size)
    cpu_lib = args.out / "tiny_llama_cpu.so"
    data = {f"param_{i}": w for i, w in enumerate(weights)}
    data["prompt"] = np.array(PROMPT, "int32")
    data["prompt_b"] = np.array(PROMPT_B, "int32")
    data.update(record_scenarios(cpu_lib, weights))
    data.update(record_rnn(build_rnn_kernels(args.out)))
    data.update(legacy_cache_scenario(tvm, np.random.default_rng(SEED + 2)))
    save_npz(args.out / "tiny_llama.npz", data)
    (args.out / "tiny_llama.json").write_text(
        json.dumps({"config": CONFIG, "seed": SEED, "param_names": param_names}, indent=1) + "\n"
    )
    print("greedy tokens", data["greedy_tokens"].tolist())


if __name__ == "__main__":
    main()
