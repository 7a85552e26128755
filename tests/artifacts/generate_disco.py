"""Generate the tensor-parallel fixtures under ``tests/artifacts/disco`` (Disco collectives).

Run it with a Python that has ``apache-tvm==0.27.0.post1`` (see ``README.md`` here)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_disco.py [--out DIR]

What it writes (fixed seeds: the npz files and tensor caches are byte-identical from run to run):

* ``collectives_cpu.so``: Relax functions whose collectives apache-tvm 0.27 lowers to the worker
  calls ``runtime.disco.*`` (``R.ccl.*``, ``call_packed``), compiled for ``llvm``:
  ``mlp_tp`` (broadcast_from_worker0 -> column-parallel matmul -> row-parallel matmul ->
  allreduce, any shard count), ``allgather_2``/``_4``, ``scatter_2``/``_4`` (scatter_from_worker0
  along axis 1), ``reduce_kinds`` (sum, prod, min, max, avg of float32), ``reduce_int32`` and
  ``reduce_float16``, and ``pipeline`` (two groups: group 0 runs a tensor-parallel stage with an
  in-group allreduce and sends its result with send_to_next_group; group 1 receives it with
  recv_from_prev_group and runs the second stage; which stage a worker runs is decided inside
  the function from ``runtime.disco.worker_id``, a Shape matched with match_cast).
  ``collectives.npz``: inputs and what numpy computes for 2 and 4 workers.
* ``tiny_decoder_cpu.so`` and ``tiny_decoder_tp2_cpu.so``: a 2-layer decoder (RMSNorm, attention
  through ``TIRPagedKVCache`` with RoPE, SiLU-gated MLP) built with ``tvm.relax.frontend.nn``,
  unsharded and split over 2 workers (attention heads and MLP columns; ``nn.op.ccl_allreduce``
  after the output projections, as MLC-LLM's tensor-parallel models do).  The tp2 library also
  holds the shard functions (TIR) that split a full weight into per-worker slices.
* ``weights/``: the decoder's weights as a tensor cache (``tvmjs.dump_tensor_cache``) with
  ``shard_info.json`` for ``runtime.disco.ShardLoader``; ``weights_presharded/``: the same weights
  split per worker, named ``param_<i>_shard-<k>-of-2``.
* ``tiny_decoder.npz``: the prompt and what apache-tvm 0.27's own runtime produced with the
  unsharded decoder on cpu: greedy tokens and the logits of every step.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax, te
from tvm.contrib import tvmjs
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op
from tvm.relax.frontend.nn.llm.kv_cache import PagedKVCache
from tvm.script import relax as R  # noqa: N812  (the TVMScript convention)
from tvm.script import tirx as T  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import save_npz  # noqa: E402  (same directory; byte-deterministic npz)
from generate_llm import (  # noqa: E402
    CONFIG,
    GEN_STEPS,
    PROMPT,
    TinyLlama,
    decoder_spec,
    make_weights,
    tir_paged_kv_cache,
)

SEED = 20261127
D, H, B = 16, 32, 4  # model width, hidden width (split between workers), batch
AG_ROWS, AG_OUT = 3, 8  # allgather: rows per worker, output columns
SC_ROWS, SC_COLS = 5, 4  # scatter: rows, columns per worker

# ------------------------------------------------------------------------ collectives


def collectives_module(d: int = D, b: int = B) -> tvm.IRModule:
    @tvm.script.ir_module
    class Collectives:
        @R.function
        def mlp_tp(
            x: R.Tensor((b, d), "float32"),
            w1: R.Tensor((d, "h"), "float32"),
            w2: R.Tensor(("h", d), "float32"),
        ) -> R.Tensor((b, d), "float32"):
            with R.dataflow():
                xb = R.ccl.broadcast_from_worker0(x)
                a = R.nn.relu(R.matmul(xb, w1))
                y = R.ccl.allreduce(R.matmul(a, w2), "sum")
                R.output(y)
            return y

        @R.function
        def allgather_2(
            x: R.Tensor((AG_ROWS, d), "float32"), w: R.Tensor((d, AG_OUT), "float32")
        ) -> R.Tensor((2 * AG_ROWS, AG_OUT), "float32"):
            with R.dataflow():
                y = R.ccl.allgather(R.matmul(x, w), num_workers=2)
                R.output(y)
            return y

        @R.function
        def allgather_4(
            x: R.Tensor((AG_ROWS, d), "float32"), w: R.Tensor((d, AG_OUT), "float32")
        ) -> R.Tensor((4 * AG_ROWS, AG_OUT), "float32"):
            with R.dataflow():
                y = R.ccl.allgather(R.matmul(x, w), num_workers=4)
                R.output(y)
            return y

        @R.function
        def scatter_2(x: R.Tensor((SC_ROWS, 2 * SC_COLS), "float32")) -> R.Tensor(
            (SC_ROWS, SC_COLS), "float32"
        ):
            with R.dataflow():
                s = R.ccl.scatter_from_worker0(x, num_workers=2, axis=1)
                y = R.add(R.multiply(s, R.const(2.0, "float32")), R.const(1.0, "float32"))
                R.output(y)
            return y

        @R.function
        def scatter_4(x: R.Tensor((SC_ROWS, 4 * SC_COLS), "float32")) -> R.Tensor(
            (SC_ROWS, SC_COLS), "float32"
        ):
            with R.dataflow():
                s = R.ccl.scatter_from_worker0(x, num_workers=4, axis=1)
                y = R.add(R.multiply(s, R.const(2.0, "float32")), R.const(1.0, "float32"))
                R.output(y)
            return y

        @R.function
        def reduce_kinds(x: R.Tensor(("n",), "float32")):
            with R.dataflow():
                s = R.ccl.allreduce(x, "sum")
                p = R.ccl.allreduce(x, "prod")
                lo = R.ccl.allreduce(x, "min")
                hi = R.ccl.allreduce(x, "max")
                avg = R.ccl.allreduce(x, "avg")
                out = (s, p, lo, hi, avg)
                R.output(out)
            return out

        @R.function
        def reduce_int32(x: R.Tensor(("n",), "int32")):
            with R.dataflow():
                out = (R.ccl.allreduce(x, "sum"), R.ccl.allreduce(x, "max"), R.ccl.allreduce(x, "avg"))
                R.output(out)
            return out

        @R.function
        def reduce_float16(x: R.Tensor(("n",), "float16")) -> R.Tensor(("n",), "float16"):
            with R.dataflow():
                y = R.ccl.allreduce(x, "sum")
                R.output(y)
            return y

        @R.function(pure=False)
        def pipeline_first(
            x: R.Tensor((b, d), "float32"),
            wa: R.Tensor((d, "h"), "float32"),
            wb: R.Tensor(("h", d), "float32"),
        ) -> R.Tensor((b, d), "float32"):
            y = R.ccl.allreduce(R.matmul(R.nn.relu(R.matmul(x, wa)), wb), "sum", True)
            _sent = R.call_packed("runtime.disco.send_to_next_group", y, ty_args=R.Tuple())
            return y

        @R.function(pure=False)
        def pipeline_second(wa: R.Tensor((d, "h"), "float32"), wb: R.Tensor(("h", d), "float32")) -> R.Tensor(
            (b, d), "float32"
        ):
            got = R.call_dps_packed(
                "runtime.disco.recv_from_prev_group", [], out_ty=R.Tensor((b, d), "float32")
            )
            y = R.ccl.allreduce(R.matmul(R.nn.relu(R.matmul(got, wa)), wb), "sum", True)
            return y

        @R.function(pure=False)
        def pipeline(
            x: R.Tensor((b, d), "float32"),
            wa: R.Tensor((d, "h"), "float32"),
            wb: R.Tensor(("h", d), "float32"),
            group_size: R.Shape(["gs"]),
        ) -> R.Tensor((b, d), "float32"):
            gs = T.int64()
            wid = T.int64()
            me = R.call_pure_packed("runtime.disco.worker_id", ty_args=R.Shape(ndim=1))
            _ = R.match_cast(me, R.Shape([wid]))
            # The stages are functions of their own: 0.27's static memory planning would share
            # storage allocated in one branch with the other.
            if R.prim_value(wid < gs):
                r = Collectives.pipeline_first(x, wa, wb)
            else:
                r = Collectives.pipeline_second(wa, wb)
            return r

    return Collectives


def relu(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, 0)


def collectives_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    f32 = "float32"
    out: dict[str, np.ndarray] = {}
    x = rng.standard_normal((B, D)).astype(f32)
    w1 = (rng.standard_normal((D, H)) / np.sqrt(D)).astype(f32)
    w2 = (rng.standard_normal((H, D)) / np.sqrt(H)).astype(f32)
    out.update(mlp_x=x, mlp_w1=w1, mlp_w2=w2)
    out["mlp_y"] = (relu(x.astype("float64") @ w1) @ w2).astype(f32)
    w_ag = (rng.standard_normal((D, AG_OUT)) / np.sqrt(D)).astype(f32)
    out["allgather_w"] = w_ag
    for n in (2, 4):
        xa = rng.standard_normal((n * AG_ROWS, D)).astype(f32)
        out[f"allgather_x_{n}"] = xa
        out[f"allgather_y_{n}"] = (xa.astype("float64") @ w_ag).astype(f32)
        xs = rng.standard_normal((SC_ROWS, n * SC_COLS)).astype(f32)
        out[f"scatter_x_{n}"] = xs
        # worker i's result, stacked: [n, rows, cols]
        out[f"scatter_y_{n}"] = np.stack([xs[:, i * SC_COLS : (i + 1) * SC_COLS] * 2 + 1 for i in range(n)])
    xr = rng.uniform(0.5, 1.5, (4, 6)).astype(f32)  # worker i contributes row i
    xi = rng.integers(-50, 50, (4, 6)).astype("int32")
    xh = rng.uniform(-2, 2, (4, 6)).astype("float16")
    out.update(reduce_x=xr, reduce_xi=xi, reduce_xh=xh)
    for n in (2, 4):
        r = xr[:n].astype("float64")
        out[f"reduce_sum_{n}"] = r.sum(0).astype(f32)
        out[f"reduce_prod_{n}"] = r.prod(0).astype(f32)
        out[f"reduce_min_{n}"] = r.min(0).astype(f32)
        out[f"reduce_max_{n}"] = r.max(0).astype(f32)
        out[f"reduce_avg_{n}"] = r.mean(0).astype(f32)
        out[f"reduce_int32_sum_{n}"] = xi[:n].sum(0).astype("int32")
        out[f"reduce_int32_max_{n}"] = xi[:n].max(0).astype("int32")
        out[f"reduce_int32_avg_{n}"] = np.trunc(xi[:n].sum(0) / n).astype("int32")  # toward zero
        out[f"reduce_float16_sum_{n}"] = xh[:n].astype("float32").sum(0).astype("float16")
    # Pipeline: stage a (group 0) then stage b (group 1), each tensor-parallel inside its group.
    px = rng.standard_normal((B, D)).astype(f32)
    shapes = (("wa0", (D, H)), ("wb0", (H, D)), ("wa1", (D, H)), ("wb1", (H, D)))
    stage = {k: (rng.standard_normal(s) / np.sqrt(s[0])).astype(f32) for k, s in shapes}
    y0 = relu(px.astype("float64") @ stage["wa0"]) @ stage["wb0"]
    y1 = relu(y0 @ stage["wa1"]) @ stage["wb1"]
    out.update(pipe_x=px, **{f"pipe_{k}": v for k, v in stage.items()})
    out["pipe_y0"] = y0.astype(f32)
    out["pipe_y1"] = y1.astype(f32)
    return out


# ----------------------------------------------------------------------- tiny decoder

# generate_llm.py's decoder configuration, prompt and number of generated tokens.
SHARDS = 2
# How each weight is split between workers: "rows" (output features: column-parallel),
# "cols" (input features: row-parallel, followed by an allreduce); others are replicated.
SPLIT = {
    "q_proj": "rows",
    "k_proj": "rows",
    "v_proj": "rows",
    "gate": "rows",
    "up": "rows",
    "o_proj": "cols",
    "down": "cols",
}


class Attention(nn.Module):
    def __init__(self, cfg: dict, shards: int) -> None:
        d = cfg["head_dim"]
        self.shards = shards
        self.heads, self.kv_heads, self.d = cfg["num_heads"] // shards, cfg["num_kv_heads"] // shards, d
        self.q_proj = nn.Linear(cfg["hidden_size"], self.heads * d, bias=False)
        self.k_proj = nn.Linear(cfg["hidden_size"], self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(cfg["hidden_size"], self.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, cfg["hidden_size"], bias=False)

    def forward(self, x: nn.Tensor, cache: PagedKVCache, layer_id: int) -> nn.Tensor:
        b, s, _ = x.shape
        q = op.reshape(self.q_proj(x), (b, s, self.heads, self.d))
        k = op.reshape(self.k_proj(x), (b, s, self.kv_heads, self.d))
        v = op.reshape(self.v_proj(x), (b, s, self.kv_heads, self.d))
        qkv = op.concat([q, k, v], dim=2)
        out = cache.attention_with_fused_qkv(layer_id, qkv, self.heads, sm_scale=self.d**-0.5)
        y = self.o_proj(op.reshape(out, (b, s, self.heads * self.d)))
        return op.ccl_allreduce(y, "sum") if self.shards > 1 else y


class MLP(nn.Module):
    def __init__(self, cfg: dict, shards: int) -> None:
        inter = cfg["intermediate_size"] // shards
        self.shards = shards
        self.gate = nn.Linear(cfg["hidden_size"], inter, bias=False)
        self.up = nn.Linear(cfg["hidden_size"], inter, bias=False)
        self.down = nn.Linear(inter, cfg["hidden_size"], bias=False)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        y = self.down(op.silu(self.gate(x)) * self.up(x))
        return op.ccl_allreduce(y, "sum") if self.shards > 1 else y


class Layer(nn.Module):
    def __init__(self, cfg: dict, layer_id: int, shards: int) -> None:
        self.layer_id = layer_id
        self.attn_norm = nn.RMSNorm(cfg["hidden_size"], -1, 1e-5, bias=False)
        self.attn = Attention(cfg, shards)
        self.mlp_norm = nn.RMSNorm(cfg["hidden_size"], -1, 1e-5, bias=False)
        self.mlp = MLP(cfg, shards)

    def forward(self, x: nn.Tensor, cache: PagedKVCache) -> nn.Tensor:
        x = x + self.attn(self.attn_norm(x), cache, self.layer_id)
        return x + self.mlp(self.mlp_norm(x))


class TinyDecoder(TinyLlama):
    """generate_llm.py's decoder (embed, prefill, decode) with layers split over `shards`."""

    def __init__(self, cfg: dict, shards: int, target: tvm.target.Target) -> None:
        super().__init__(cfg, target)
        self.shards = shards
        self.layers = nn.ModuleList([Layer(cfg, i, shards) for i in range(cfg["num_layers"])])

    def create_tir_paged_kv_cache(
        self, max_batch_size, max_total_seq_len, prefill_chunk_size, page_size, support_sliding_window
    ) -> PagedKVCache:
        cfg = self.cfg
        sizes = (max_batch_size, max_total_seq_len, prefill_chunk_size, page_size, support_sliding_window)
        heads, kv_heads = cfg["num_heads"] // self.shards, cfg["num_kv_heads"] // self.shards
        return tir_paged_kv_cache(cfg, self.target, heads, kv_heads, *sizes)


def export_decoder(shards: int, target: tvm.target.Target):
    model = TinyDecoder(CONFIG, shards, target)
    model.to("float32")
    return model.export_tvm(spec=decoder_spec(CONFIG["hidden_size"]))


def split_kind(name: str) -> str | None:
    for key, kind in SPLIT.items():
        if f".{key}." in name:
            return kind
    return None


def shard_of(w: np.ndarray, kind: str | None, k: int, shards: int = SHARDS) -> np.ndarray:
    if kind == "rows":
        return np.split(w, shards, axis=0)[k]
    if kind == "cols":
        return np.split(w, shards, axis=1)[k]
    return w


def shard_function(kind: str, rows: int, cols: int, shards: int = SHARDS):
    """TIR function splitting a [rows, cols] weight into [shards, ...] (slice i for worker i)."""
    w = te.placeholder((rows, cols), "float32", name="w")
    if kind == "rows":
        per = rows // shards
        out = te.compute((shards, per, cols), lambda s, r, c: w[s * per + r, c], name="shard")
    else:
        per = cols // shards
        out = te.compute((shards, rows, per), lambda s, r, c: w[r, s * per + c], name="shard")
    name = f"shard_{kind}_{rows}x{cols}"
    return name, te.create_prim_func([w, out]).with_attr("global_symbol", name), list(out.shape)


def reference_tokens(lib_path: Path, weights: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Greedy generation with apache-tvm 0.27's runtime and the unsharded decoder."""
    dev = tvm.cpu()
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(lib_path)), dev)
    params = [tvm.runtime.tensor(w, dev) for w in weights]
    shape = tvm.runtime.ShapeTuple
    cfg = CONFIG
    sizes = ("max_batch_size", "max_total_seq_len", "prefill_chunk_size", "page_size")
    cache = vm["create_tir_paged_kv_cache"](
        *(shape([cfg[k]]) for k in sizes), shape([0])
    )  # no sliding window
    g = tvm.get_global_func
    g("vm.builtin.kv_state_add_sequence")(cache, 0)

    def step(tokens: list[int]) -> np.ndarray:
        g("vm.builtin.kv_state_begin_forward")(cache, shape([0]), shape([len(tokens)]))
        emb = vm["embed"](tvm.runtime.tensor(np.array(tokens, "int32"), dev), params)
        emb = tvm.runtime.tensor(emb.numpy().reshape(1, len(tokens), -1), dev)
        logits, _ = vm["prefill" if len(tokens) > 1 else "decode"](emb, cache, params)
        g("vm.builtin.kv_state_end_forward")(cache)
        return logits.numpy()[0, -1]

    logits = [step(PROMPT)]
    tokens = [int(np.argmax(logits[-1]))]
    for _ in range(GEN_STEPS - 1):
        logits.append(step([tokens[-1]]))
        tokens.append(int(np.argmax(logits[-1])))
    return {"greedy_tokens": np.array(tokens, "int32"), "greedy_logits": np.stack(logits).astype("float32")}


def write_caches(out: Path, weights: list[np.ndarray], names: list[str], shard_funcs: dict) -> None:
    full = out / "weights"
    pre = out / "weights_presharded"
    for d in (full, pre):
        if d.exists():
            shutil.rmtree(d)
    meta = {"generator": "tests/artifacts/generate_disco.py"}
    tvmjs.dump_tensor_cache(
        {f"param_{i}": w for i, w in enumerate(weights)},
        str(full),
        encode_format="raw",
        meta_data=meta,
        show_progress=False,
    )
    shard_info = {}
    for i, name in enumerate(names):
        kind = split_kind(name)
        if kind is not None:
            func, out_shape = shard_funcs[(kind, weights[i].shape)]
            shard_info[f"param_{i}"] = [[func, [out_shape, "float32"]]]
    (full / "shard_info.json").write_text(json.dumps(shard_info, sort_keys=True) + "\n")
    # Presharded: every worker's records together, worker 1's first (LoadPresharded indexes so).
    presharded = {}
    for k in range(SHARDS):
        for i, name in enumerate(names):
            presharded[f"param_{i}_shard-{k + 1}-of-{SHARDS}"] = np.ascontiguousarray(
                shard_of(weights[i], split_kind(name), k)
            )
    tvmjs.dump_tensor_cache(presharded, str(pre), encode_format="raw", meta_data=meta, show_progress=False)


def build_decoders(out: Path) -> dict[str, np.ndarray]:
    target = tvm.target.Target("llvm")
    mod, named_params = export_decoder(1, target)
    names = [n for n, _ in named_params]
    weights = make_weights(named_params, SEED)
    with target:
        ex = tvm.compile(mod, target=target)
    ex.export_library(str(out / "tiny_decoder_cpu.so"), options=["-s"])

    tp_mod, tp_params = export_decoder(SHARDS, target)
    assert [n for n, _ in tp_params] == names
    shard_funcs = {}
    for i, name in enumerate(names):
        kind = split_kind(name)
        if kind is None:
            continue
        key = (kind, weights[i].shape)
        if key not in shard_funcs:
            fname, func, out_shape = shard_function(kind, *weights[i].shape)
            tp_mod[fname] = func
            shard_funcs[key] = (fname, [int(s) for s in out_shape])
        want = [int(s) for s in tp_params[i][1].shape]
        assert list(shard_of(weights[i], kind, 0).shape) == want, (name, want)
    with target:
        tp_ex = tvm.compile(tp_mod, target=target)
    tp_ex.export_library(str(out / "tiny_decoder_tp2_cpu.so"), options=["-s"])
    lib = tvm.runtime.load_module(str(out / "tiny_decoder_tp2_cpu.so"))
    for fname, _ in shard_funcs.values():
        assert lib.implements_function(fname, query_imports=True), fname

    write_caches(out, weights, names, shard_funcs)
    data = reference_tokens(out / "tiny_decoder_cpu.so", weights)
    data["prompt"] = np.array(PROMPT, "int32")
    (out / "tiny_decoder.json").write_text(
        json.dumps({"config": CONFIG, "shards": SHARDS, "seed": SEED, "param_names": names}, indent=1) + "\n"
    )
    return data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "disco")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ex = tvm.compile(collectives_module(), target="llvm")
    ex.export_library(str(args.out / "collectives_cpu.so"), options=["-s"])
    save_npz(args.out / "collectives.npz", collectives_data(np.random.default_rng(SEED)))
    data = build_decoders(args.out)
    save_npz(args.out / "tiny_decoder.npz", data)
    for p in sorted(args.out.rglob("*")):
        if p.is_file():
            print("wrote", p, p.stat().st_size)
    print("greedy tokens", data["greedy_tokens"].tolist())


if __name__ == "__main__":
    main()
