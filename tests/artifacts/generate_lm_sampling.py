"""Record apache-tvm 0.27's results for the LLM sampling builtins under ``tests/artifacts/lm_sampling``.

Run it with a Python that has ``apache-tvm==0.27.0.post1``::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_lm_sampling.py [--out DIR]

Inputs are made from a fixed seed; every builtin is called through apache-tvm 0.27's own runtime
(``vm.builtin.sample_top_p_from_logits``, ``sample_top_p_from_prob``,
``multinomial_from_uniform``, ``apply_softmax_with_temperature``, ``apply_repetition_penalty``,
``apply_presence_and_frequency_penalty``) and its answers are written next to the inputs:

* ``sampling.npz``: the input rows and the output arrays (``<case>_out``);
* ``cases.json``: each call's scalar arguments and, for the samplers, the token 0.27 picked.

``tests/vm/test_lm_sampling.py`` checks our runtime against these answers and, independently,
against a numpy implementation of the same rules.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

import tvm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import save_npz  # noqa: E402  (same directory; byte-deterministic npz)

HERE = Path(__file__).resolve().parent
UNIFORMS = [0.0, 0.13, 0.5, 0.87, 0.999]


def builtin(name: str) -> Any:
    return tvm.get_global_func("vm.builtin." + name)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype("float64") - x.max())
    return (e / e.sum()).astype("float32")


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for i in range(3):  # distinct values: no ties, whose order a sort may choose freely
        base = rng.permutation(64) * 0.11 + rng.uniform(0, 0.01, 64)
        arrays[f"logits{i}"] = (base * (0.7 + i)).astype("float32")[None, :]
        arrays[f"prob{i}"] = softmax(arrays[f"logits{i}"][0])[None, :]
    peaked = np.arange(64) + 100.0  # one token at 0.9, a tail of distinct values summing to 0.1
    peaked[17] = 0.0
    peaked = peaked / peaked.sum() * 0.1
    peaked[17] = 0.9
    arrays["prob_peaked"] = peaked.astype("float32")[None, :]
    # 2048 nearly equal tokens: all below top_p / 1024, so 0.27's filter finds nothing and falls
    # back to the full sort.
    flat = rng.permutation(2048) * 1e-4 + 1.0
    arrays["prob_flat"] = (flat / flat.sum()).astype("float32")[None, :]
    batch = np.stack([softmax(rng.standard_normal(40).astype("float32") * 2) for _ in range(4)])
    arrays["multinomial_prob"] = batch
    arrays["multinomial_uniform"] = np.array([[0.05], [0.4], [0.75], [0.995]], "float32")
    arrays["token_ids"] = np.array([3, 7, 7, 20, 41, 0, 63], "int32")
    arrays["token_freqs"] = np.array([1, 2, 2, 5, 1, 3, 1], "int32")
    mixed = rng.standard_normal(64).astype("float32") * 4
    arrays["logits_mixed"] = mixed[None, :]  # positive and negative logits for the penalties
    for name, row in arrays.items():
        # Equal values may be sorted either way (0.27 uses an unstable sort): keep rows tie-free.
        if name.startswith(("logits", "prob")):
            assert np.unique(row).size == row.size, f"{name} has ties"
    return arrays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "lm_sampling")
    args = parser.parse_args(argv)
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)

    arrays = make_inputs(np.random.default_rng(1125))
    cpu = tvm.cpu()
    cases: dict[str, list[dict[str, Any]]] = {k: [] for k in ("logits", "prob", "multinomial")}
    cases.update({k: [] for k in ("softmax", "repetition", "presence_frequency")})

    for i in range(3):
        row = tvm.runtime.tensor(arrays[f"logits{i}"], cpu)
        for temperature in (0.0, 0.5, 1.0, 1.7):
            for top_p in (0.25, 0.9, 1.0):
                for u in UNIFORMS:
                    token = builtin("sample_top_p_from_logits")(row, temperature, top_p, u)
                    cases["logits"].append(
                        {"input": f"logits{i}", "temperature": temperature, "top_p": top_p,
                         "uniform": u, "token": int(token)}
                    )  # fmt: skip
    for name in ("prob0", "prob1", "prob2", "prob_peaked", "prob_flat"):
        row = tvm.runtime.tensor(arrays[name], cpu)
        for top_p in (0.1, 0.5, 0.9, 1.0):
            for u in UNIFORMS:
                token = builtin("sample_top_p_from_prob")(row, top_p, u)
                cases["prob"].append({"input": name, "top_p": top_p, "uniform": u, "token": int(token)})

    res = builtin("multinomial_from_uniform")(
        tvm.runtime.tensor(arrays["multinomial_prob"], cpu),
        tvm.runtime.tensor(arrays["multinomial_uniform"], cpu),
    )
    arrays["multinomial_out"] = res.numpy()
    cases["multinomial"].append({"prob": "multinomial_prob", "uniform": "multinomial_uniform",
                                 "out": "multinomial_out"})  # fmt: skip

    for j, temperature in enumerate((0.3, 1.0, 2.5)):
        t = tvm.runtime.tensor(arrays["logits0"], cpu)
        builtin("apply_softmax_with_temperature")(t, temperature)
        arrays[f"softmax{j}_out"] = t.numpy()
        cases["softmax"].append({"input": "logits0", "temperature": temperature, "out": f"softmax{j}_out"})
    ids = tvm.runtime.tensor(arrays["token_ids"], cpu)
    freqs = tvm.runtime.tensor(arrays["token_freqs"], cpu)
    for j, penalty in enumerate((1.0, 1.3, 0.8)):
        t = tvm.runtime.tensor(arrays["logits_mixed"], cpu)
        builtin("apply_repetition_penalty")(t, ids, penalty)
        arrays[f"repetition{j}_out"] = t.numpy()
        cases["repetition"].append({"penalty": penalty, "out": f"repetition{j}_out"})
    for j, (presence, frequency) in enumerate(((0.5, 0.25), (0.0, 1.1), (-0.3, 0.0))):
        t = tvm.runtime.tensor(arrays["logits_mixed"], cpu)
        builtin("apply_presence_and_frequency_penalty")(t, ids, freqs, presence, frequency)
        arrays[f"presence_frequency{j}_out"] = t.numpy()
        cases["presence_frequency"].append(
            {"presence": presence, "frequency": frequency, "out": f"presence_frequency{j}_out"}
        )

    save_npz(out / "sampling.npz", arrays)
    (out / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")
    print(f"wrote {out}: " + ", ".join(f"{len(v)} {k}" for k, v in cases.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
