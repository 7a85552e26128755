"""Language-model latency with the paged KV cache: tvm-runtime vs apache-tvm 0.27 on the CPU.

    python benchmarks/llm_bench.py --ours-python PY --apache-python PY \\
        [--out results/llm_bench.json] [--markdown results/llm_bench.md]

The model is tests/artifacts/llm/tiny_llama_cpu.so (a 2-layer decoder that apache-tvm 0.27
compiled with TIRPagedKVCache; see tests/artifacts/generate_llm.py).  Each child process, in one
venv or the other, creates the model's KV cache and measures what an engine does per request:

* prefill: add a sequence, ``kv_state_begin_forward`` + ``vm["prefill"]`` of a
  ``--prompt``-token prompt + ``kv_state_end_forward``, remove the sequence (ms per prefill);
* decode: after a prefill, ``--decode``-token runs of begin_forward + ``vm["decode"]`` (one token)
  + end_forward (ms per token).  Inputs are embeddings already on the device, so the time is the
  runtime's: VM, KV-cache bookkeeping and index uploads, the model's kernels.

The children alternate between the venvs (ours, apache, then apache, ours, ...) so machine drift
hits both alike.  Target from the issue: ours <= 1.0x apache-tvm for both.  This is a benchmark,
not a test: the exit status is 0 unless ``--fail-on-target`` is given and a target is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _harness as h
from _stats import median, ratio, summarize

RATIO_LIMIT = 1.0
REPO = Path(__file__).resolve().parent.parent
LLM = REPO / "tests" / "artifacts" / "llm"

SERIES = {"prefill_ms": "prefill (ms)", "decode_ms_per_token": "decode (ms/token)"}


def bench(spec: dict[str, Any], pythons: dict[str, str], rounds: int, cwd: str, env: dict[str, str]):
    children = h.alternate_spec(pythons, spec, rounds, cwd, env)
    return {key: {s: [v for run in runs for v in run[s]] for s in SERIES} for key, runs in children.items()}


def render_markdown(results: dict[str, Any]) -> str:
    rows = [
        [
            label,
            h.cell(m["ours"]),
            h.cell(m["apache"]),
            h.ratio_verdict(m["ratio_ours_vs_apache"], RATIO_LIMIT),
        ]
        for s, label in SERIES.items()
        for m in [results["series"][s]]
    ]
    cfg = results["config"]
    note = (
        f"median (p10-p90) of {cfg['rounds']} children x {cfg['reps']} requests per variant, "
        f"interleaved; prompt {cfg['prompt']} tokens, {cfg['decode']} decode steps per request; "
        f"{h.machine_note(results)}."
    )
    return h.markdown_table(["measurement", "ours", "apache-tvm 0.27", "ratio", "target"], rows, note)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = h.ours_vs_apache_parser(__doc__, "llm_bench")
    p.add_argument("--prompt", type=int, default=48, help="prompt tokens (default 48)")
    p.add_argument("--decode", type=int, default=32, help="decode steps per request (default 32)")
    p.add_argument("--num-threads", type=int, help="TVM_NUM_THREADS for the children")
    h.add_counts(p, unit="requests", rounds=6, reps=30, warmup=5)
    args = h.parse_counts(p, argv, rounds=1, reps=3, warmup=1)
    if min(args.prompt, args.decode) < 1:
        p.error("counts must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    start = h.started()
    meta = json.loads((LLM / "tiny_llama.json").read_text())
    cfg = meta["config"]
    if args.prompt > cfg["prefill_chunk_size"] or args.prompt + args.decode > cfg["max_total_seq_len"]:
        raise SystemExit("prompt/decode lengths exceed the model's cache configuration")
    spec = {
        "task": "llm_request",
        "artifact": str(LLM / "tiny_llama_cpu.so"),
        "npz": str(LLM / "tiny_llama.npz"),
        "meta": str(LLM / "tiny_llama.json"),
        "num_params": len(meta["param_names"]),
        "prompt": args.prompt,
        "decode": args.decode,
        "blocks": args.reps,
        "warmup": args.warmup,
    }
    pythons = {"ours": args.ours_python, "apache": args.apache_python}
    env = h.child_env({} if args.num_threads is None else {"TVM_NUM_THREADS": str(args.num_threads)})
    with tempfile.TemporaryDirectory(prefix="llm_bench_") as cwd:  # keep the repo off sys.path
        venvs = h.probe_venvs(pythons, cwd, env)
        raw = bench(spec, pythons, args.rounds, cwd, env)
    series: dict[str, Any] = {}
    targets = []
    for s in SERIES:
        ours, ref = summarize(raw["ours"][s]), summarize(raw["apache"][s])
        r = round(ratio(median(raw["ours"][s]), median(raw["apache"][s])), 4)
        series[s] = {"ours": ours.to_dict(4), "apache": ref.to_dict(4), "ratio_ours_vs_apache": r}
        targets.append(
            {
                "name": s,
                "measured": r,
                "limit": RATIO_LIMIT,
                "comparison": "<=",
                "unit": "x apache-tvm (median)",
                "pass": r <= RATIO_LIMIT,
            }
        )
        h.log(f"  {SERIES[s]:18s} ours {ours.median:8.3f}  apache {ref.median:8.3f}  ratio {r:.3f}")
    body = {
        "venvs": venvs,
        "config": h.counts_config(
            args, prompt=args.prompt, decode=args.decode, num_threads=args.num_threads, units="milliseconds"
        ),
        "series": series,
        "raw": raw,
    }
    return h.finish("llm_bench", args, start, body, targets, render_markdown)


if __name__ == "__main__":
    sys.exit(main())
