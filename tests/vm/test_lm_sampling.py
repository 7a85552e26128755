"""LLM sampling and logit-processing builtins (``vm.builtin.sample_top_p_*``,
``multinomial_from_uniform``, ``apply_*``): against apache-tvm 0.27's own answers for the same
inputs (recorded by ``tests/artifacts/generate_lm_sampling.py``) and against numpy implementations
of the rules, for fixed uniform draws."""

from __future__ import annotations

import json

import numpy as np
import pytest
from vm_support import device_for

import tvm
from conftest import ARTIFACTS

FIXTURE = ARTIFACTS / "lm_sampling"
DATA = np.load(FIXTURE / "sampling.npz")
CASES = json.loads((FIXTURE / "cases.json").read_text())
F32 = np.float32


def g(name: str):
    return tvm.get_global_func("vm.builtin." + name)


# ---------------------------------------------------------------- numpy references (float32 math)


def nucleus_pick(sorted_p: np.ndarray, running: np.ndarray, top_p: float, u: float) -> int | None:
    """Position in the sorted candidates that `u` selects within the top-p nucleus."""
    before = np.concatenate([[F32(0)], running[:-1]]).astype("float64")
    size = int(np.count_nonzero(before < top_p))
    mass = running[size - 1]
    hits = np.nonzero((running[:size] / mass).astype("float64") > u)[0]
    return int(hits[0]) if hits.size else None


def ref_from_logits(logits: np.ndarray, temperature: float, top_p: float, u: float) -> int:
    x = logits.ravel()
    order = np.argsort(-x, kind="stable")
    if temperature < 1e-6:
        return int(order[0])
    s = x[order]
    e = np.exp((s - s[0]) * F32(1.0 / temperature))
    p = e / np.add.accumulate(e)[-1]
    pos = nucleus_pick(p, np.add.accumulate(p), top_p, u)
    assert pos is not None
    return int(order[pos])


def ref_from_prob(prob: np.ndarray, top_p: float, u: float) -> int:
    p = prob.ravel()

    def among(cutoff: np.float32) -> int | None:
        idx = np.nonzero(p >= cutoff)[0]
        if idx.size == 0:
            return None
        order = idx[np.argsort(-p[idx], kind="stable")]
        s = p[order]
        if u < float(s[0]) / top_p:  # 0.27 returns the most likely token straight away here
            return int(order[0])
        running = np.add.accumulate(s)
        before = np.concatenate([[F32(0)], running[:-1]]).astype("float64")
        if not np.any(before >= top_p) and float(running[-1]) < top_p and cutoff != 0:
            return None  # the filtered tokens hold less than top_p: retry with all of them
        pos = nucleus_pick(s, running, top_p, u)
        return int(order[pos]) if pos is not None else int(order[-1])

    if top_p < 1:
        token = among(F32(top_p / 1024))
        if token is not None:
            return token
    token = among(F32(0))
    assert token is not None
    return token


def ref_multinomial(prob: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    out = []
    for row, u in zip(prob, uniform.ravel()):
        hits = np.nonzero(np.add.accumulate(row) > u)[0]
        out.append(hits[0] if hits.size else row.size - 1)
    return np.array(out, "int64")[:, None]


def ref_softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    x = (logits * F32(1.0 / temperature)).astype("float64")
    e = np.exp(x - x.max())
    return (e / e.sum()).astype("float32")


# ---------------------------------------------------------------- samplers


def test_sample_top_p_from_logits_matches_apache_tvm_and_numpy():
    cpu = tvm.cpu()
    rows = {name: tvm.runtime.tensor(DATA[name], cpu) for name in ("logits0", "logits1", "logits2")}
    f = g("sample_top_p_from_logits")
    distinct = set()
    for c in CASES["logits"]:
        got = f(rows[c["input"]], c["temperature"], c["top_p"], c["uniform"])
        want_np = ref_from_logits(DATA[c["input"]], c["temperature"], c["top_p"], c["uniform"])
        assert (got, want_np) == (c["token"], c["token"]), c
        distinct.add(got)
    assert len(distinct) > 10  # the cases really reach different tokens


def test_sample_top_p_from_prob_matches_apache_tvm_and_numpy():
    cpu = tvm.cpu()
    f = g("sample_top_p_from_prob")
    rows = {c["input"]: tvm.runtime.tensor(DATA[c["input"]], cpu) for c in CASES["prob"]}
    for c in CASES["prob"]:
        got = f(rows[c["input"]], c["top_p"], c["uniform"])
        want_np = ref_from_prob(DATA[c["input"]], c["top_p"], c["uniform"])
        assert (got, want_np) == (c["token"], c["token"]), c
    # the flat row takes 0.27's fallback (no token above top_p / 1024), the peaked one its shortcut
    flat = [c["token"] for c in CASES["prob"] if c["input"] == "prob_flat"]
    assert len(set(flat)) > 5


def test_multinomial_from_uniform():
    (c,) = CASES["multinomial"]
    prob, uniform = DATA[c["prob"]], DATA[c["uniform"]]
    out = g("multinomial_from_uniform")(tvm.runtime.tensor(prob), tvm.runtime.tensor(uniform))
    assert out.dtype == "int64" and out.shape == (4, 1) and out.device == tvm.cpu(0)
    np.testing.assert_array_equal(out.numpy(), DATA[c["out"]])
    np.testing.assert_array_equal(out.numpy(), ref_multinomial(prob, uniform))


def test_samplers_read_device_tensors():
    dev = device_for(tvm, "opencl")
    c = CASES["logits"][40]
    row = tvm.runtime.tensor(DATA[c["input"]], dev)
    assert g("sample_top_p_from_logits")(row, c["temperature"], c["top_p"], c["uniform"]) == c["token"]
    c = CASES["prob"][7]
    row = tvm.runtime.tensor(DATA[c["input"]], dev)
    assert g("sample_top_p_from_prob")(row, c["top_p"], c["uniform"]) == c["token"]
    (m,) = CASES["multinomial"]
    out = g("multinomial_from_uniform")(
        tvm.runtime.tensor(DATA[m["prob"]], dev), tvm.runtime.tensor(DATA[m["uniform"]], dev)
    )
    np.testing.assert_array_equal(out.numpy(), DATA[m["out"]])


# ---------------------------------------------------------------- in-place logit processing


def test_softmax_with_temperature():
    for c in CASES["softmax"]:
        t = tvm.runtime.tensor(DATA[c["input"]])
        g("apply_softmax_with_temperature")(t, c["temperature"])
        np.testing.assert_array_max_ulp(t.numpy(), DATA[c["out"]], maxulp=1)
        np.testing.assert_allclose(
            t.numpy(), ref_softmax(DATA[c["input"]], c["temperature"]), rtol=2e-6, atol=1e-9
        )


def test_repetition_penalty():
    ids = DATA["token_ids"]
    for c in CASES["repetition"]:
        t = tvm.runtime.tensor(DATA["logits_mixed"])
        g("apply_repetition_penalty")(t, tvm.runtime.tensor(ids), c["penalty"])
        want = DATA["logits_mixed"].copy()
        for i in ids:  # every listed id, repeated ones again
            v = float(want[0, i])
            want[0, i] = v * c["penalty"] if v <= 0 else v / c["penalty"]
        np.testing.assert_array_equal(t.numpy(), DATA[c["out"]])
        np.testing.assert_array_equal(t.numpy(), want)


def test_presence_and_frequency_penalty():
    ids, freqs = DATA["token_ids"], DATA["token_freqs"]
    for c in CASES["presence_frequency"]:
        t = tvm.runtime.tensor(DATA["logits_mixed"])
        g("apply_presence_and_frequency_penalty")(
            t, tvm.runtime.tensor(ids), tvm.runtime.tensor(freqs), c["presence"], c["frequency"]
        )
        want = DATA["logits_mixed"].copy()
        for i, n in zip(ids, freqs):
            want[0, i] = float(want[0, i]) - (int(n) * c["frequency"] + c["presence"])
        np.testing.assert_array_equal(t.numpy(), DATA[c["out"]])
        np.testing.assert_array_equal(t.numpy(), want)


# ---------------------------------------------------------------- errors


def test_bad_arguments_raise_clear_errors():
    logits = tvm.runtime.tensor(DATA["logits_mixed"])
    ids = tvm.runtime.tensor(DATA["token_ids"])
    with pytest.raises(TypeError, match="logits must be float32, got float16"):
        g("sample_top_p_from_logits")(tvm.runtime.tensor(np.zeros((1, 8), "float16")), 1.0, 0.9, 0.5)
    with pytest.raises(ValueError, match="leading dimensions of prob must be 1"):
        g("sample_top_p_from_prob")(tvm.runtime.tensor(np.full((2, 4), 0.25, "float32")), 0.9, 0.5)
    with pytest.raises(ValueError, match="all NaN"):
        g("sample_top_p_from_prob")(tvm.runtime.tensor(np.full((1, 4), np.nan, "float32")), 0.9, 0.5)
    with pytest.raises(ValueError, match="outside \\[0, 1\\)"):
        g("sample_top_p_from_logits")(logits, 1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="token id 64 .* outside the vocabulary of 64"):
        g("apply_repetition_penalty")(logits, tvm.runtime.tensor(np.array([64], "int32")), 1.2)
    with pytest.raises(TypeError, match="token_ids must be int32, got int64"):
        g("apply_repetition_penalty")(logits, tvm.runtime.tensor(np.array([1], "int64")), 1.2)
    with pytest.raises(ValueError, match="token_freqs has 1 entries, token_ids 7"):
        g("apply_presence_and_frequency_penalty")(
            logits, ids, tvm.runtime.tensor(np.array([1], "int32")), 0.1, 0.1
        )
    with pytest.raises(ValueError, match="temperature must be > 0"):
        g("apply_softmax_with_temperature")(logits, 0.0)
    with pytest.raises(ValueError, match="need one per row"):
        g("multinomial_from_uniform")(
            tvm.runtime.tensor(DATA["multinomial_prob"]), tvm.runtime.tensor(np.zeros(2, "float32"))
        )
    np.testing.assert_array_equal(logits.numpy(), DATA["logits_mixed"])  # failed calls change nothing


def test_in_place_builtins_refuse_device_tensors():
    dev = device_for(tvm, "opencl")
    logits = tvm.runtime.tensor(DATA["logits_mixed"], dev)
    with pytest.raises(ValueError, match="logits must be a CPU tensor .*copy it to tvm.cpu"):
        g("apply_softmax_with_temperature")(logits, 1.0)
