"""A 2-layer decoder compiled by apache-tvm 0.27 (tvm.relax.frontend.nn + TIRPagedKVCache, see
tests/artifacts/generate_llm.py) generates on our runtime exactly what it generates on
apache-tvm's: greedy tokens, logits, batching, fork, popn and remove, on CPU and OpenCL (PoCL).
"""

from __future__ import annotations

import numpy as np
import pytest
from llm_support import Engine, library_path, load_expected, weights_of

import tvm

META, EXPECTED = load_expected()
CONFIG = META["config"]
PROMPT = EXPECTED["prompt"].tolist()
PROMPT_B = EXPECTED["prompt_b"].tolist()
STEPS = len(EXPECTED["greedy_tokens"])
ATOL = 1e-4


@pytest.fixture(scope="module")
def cpu_lib(tmp_path_factory):
    return library_path("cpu", tmp_path_factory.mktemp("llm"))


def engine(lib, dev=None) -> Engine:
    return Engine(tvm, lib, dev or tvm.cpu(), weights_of(EXPECTED), CONFIG)


def test_greedy_generation_matches_apache_tvm(cpu_lib):
    eng = engine(cpu_lib)
    tokens, logits = eng.greedy(0, PROMPT, STEPS)
    assert tokens == EXPECTED["greedy_tokens"].tolist()
    np.testing.assert_allclose(logits, EXPECTED["greedy_logits"], atol=ATOL, rtol=0)
    assert eng.cache_call("get_total_sequence_length") == len(PROMPT) + STEPS - 1


def test_prefill_logits_of_every_token(cpu_lib):
    eng = engine(cpu_lib)
    eng.add_sequence(0)
    np.testing.assert_allclose(eng.prefill({0: PROMPT}), EXPECTED["prefill_logits"], atol=ATOL)


def test_two_sequences_batched(cpu_lib):
    eng = engine(cpu_lib)
    eng.add_sequence(0)
    eng.add_sequence(1)
    logits = eng.prefill({0: PROMPT, 1: PROMPT_B})
    last = [logits[len(PROMPT) - 1], logits[-1]]
    steps = [np.stack(last)]
    tokens = [[int(np.argmax(x))] for x in last]
    for _ in range(STEPS - 1):
        step = eng.decode({0: tokens[0][-1], 1: tokens[1][-1]})
        steps.append(step)
        for j in (0, 1):
            tokens[j].append(int(np.argmax(step[j])))
    assert tokens == EXPECTED["batch_tokens"].tolist()
    np.testing.assert_allclose(np.stack(steps), EXPECTED["batch_logits"], atol=ATOL, rtol=0)


def test_fork_whole_sequence_and_at_a_position(cpu_lib):
    eng = engine(cpu_lib)
    eng.add_sequence(0)
    eng.prefill({0: PROMPT})
    free_before = eng.cache_call("get_num_available_pages")
    eng.fork_sequence(0, 5, -1)
    # A fork shares the parent's pages: it takes none until it writes.
    assert eng.cache_call("get_num_available_pages") == free_before
    decoded = eng.decode({0: 4, 5: 44})
    np.testing.assert_allclose(decoded, EXPECTED["fork_decode_logits"], atol=ATOL, rtol=0)
    eng.fork_sequence(0, 6, 7)
    prefilled = eng.prefill({6: PROMPT_B})
    np.testing.assert_allclose(prefilled, EXPECTED["fork_prefill_logits"], atol=ATOL, rtol=0)
    assert eng.cache_call("get_sequence_length", 6) == 7 + len(PROMPT_B)


def test_fork_shares_kv_until_written(cpu_lib):
    eng = engine(cpu_lib)
    eng.add_sequence(0)
    eng.prefill({0: PROMPT})
    eng.fork_sequence(0, 1, 10)
    shape = (CONFIG["num_layers"], 10, CONFIG["num_kv_heads"], CONFIG["head_dim"])
    kv = {}
    for seq in (0, 1):
        k, v = tvm.runtime.empty(shape, "float32"), tvm.runtime.empty(shape, "float32")
        eng.cache_call("debug_get_kv", seq, 0, 10, k, v)
        kv[seq] = (k.numpy(), v.numpy())
    assert np.abs(kv[0][0]).sum() > 0
    np.testing.assert_array_equal(kv[0][0], kv[1][0])
    np.testing.assert_array_equal(kv[0][1], kv[1][1])
    # The child writes into the page it shares with the parent: the parent's tokens stay.
    eng.prefill({1: [1, 2, 3]})
    k, v = tvm.runtime.empty(shape, "float32"), tvm.runtime.empty(shape, "float32")
    eng.cache_call("debug_get_kv", 0, 0, 10, k, v)
    np.testing.assert_array_equal(k.numpy(), kv[0][0])


def test_popn_then_remove_and_reuse_pages(cpu_lib):
    eng = engine(cpu_lib)
    eng.add_sequence(0)
    eng.prefill({0: PROMPT})
    eng.popn(0, 5)
    assert eng.cache_call("get_sequence_length", 0) == len(PROMPT) - 5
    decoded = eng.decode({0: PROMPT[len(PROMPT) - 5]})
    np.testing.assert_allclose(decoded, EXPECTED["popn_decode_logits"], atol=ATOL, rtol=0)
    eng.add_sequence(1)
    eng.prefill({1: PROMPT_B})
    free = eng.cache_call("get_num_available_pages")
    eng.remove_sequence(1)
    assert eng.cache_call("get_num_available_pages") == free + 1
    eng.add_sequence(2)
    np.testing.assert_allclose(
        eng.prefill({2: PROMPT_B[:3]}), EXPECTED["remove_prefill_logits"], atol=ATOL, rtol=0
    )
    np.testing.assert_allclose(eng.decode({0: 7, 2: 9}), EXPECTED["remove_decode_logits"], atol=ATOL, rtol=0)


def test_sliding_window_with_attention_sinks(cpu_lib):
    eng = Engine(tvm, cpu_lib, tvm.cpu(), weights_of(EXPECTED), CONFIG, sliding_window=1)
    eng.add_sequence(0)
    eng.add_sequence(1)
    eng.cache_call("enable_sliding_window_for_seq", 0, 24, 4)
    logits = [eng.prefill({0: PROMPT, 1: PROMPT_B})[len(PROMPT) - 1]]
    token = int(np.argmax(logits[-1]))
    for _ in range(STEPS - 1):
        step = eng.decode({0: token, 1: 5})
        logits.append(step[0])
        token = int(np.argmax(step[0]))
    np.testing.assert_allclose(np.stack(logits), EXPECTED["sliding_decode_logits"], atol=ATOL, rtol=0)
    np.testing.assert_allclose(eng.prefill({0: PROMPT[:10]}), EXPECTED["sliding_prefill_logits"], atol=ATOL)
    lengths = [eng.cache_call("get_sequence_length", i) for i in (0, 1)]
    assert lengths == EXPECTED["sliding_lengths"].tolist()


def test_query_positions_and_clear(cpu_lib):
    eng = engine(cpu_lib)
    assert eng.cache_call("empty")
    total_pages = eng.cache_call("get_num_available_pages")
    eng.add_sequence(3)
    eng.add_sequence(4)
    eng.prefill({3: PROMPT})
    begin = tvm.get_global_func("vm.builtin.kv_state_begin_forward")
    shape = tvm.runtime.ShapeTuple
    begin(eng.cache, shape([4, 3]), shape([2, 1]))
    positions = eng.cache_call("get_query_positions").numpy()
    assert positions.tolist() == [0, 1, len(PROMPT)]
    tvm.get_global_func("vm.builtin.kv_state_end_forward")(eng.cache)
    tvm.get_global_func("vm.builtin.kv_state_clear")(eng.cache)
    assert eng.cache_call("empty")
    assert eng.cache_call("get_num_available_pages") == total_pages


def test_opencl_generation_matches_cpu_tokens(tmp_path):
    from backend_testing.devices import device_or_skip

    dev = device_or_skip(tvm, tvm.opencl(0), 4, "OpenCL")
    eng = engine(library_path("opencl", tmp_path), dev)
    tokens, logits = eng.greedy(0, PROMPT, STEPS)
    assert tokens == EXPECTED["greedy_tokens"].tolist()
    np.testing.assert_allclose(logits, EXPECTED["greedy_logits"], atol=ATOL, rtol=0)
    # Batching and forks take the same paths on the device (index arrays uploaded per forward).
    eng.add_sequence(1)
    eng.fork_sequence(0, 2, 7)
    out = eng.prefill({1: PROMPT_B, 2: PROMPT_B})
    np.testing.assert_allclose(out[: len(PROMPT_B)], EXPECTED["prefill_logits_b"], atol=ATOL)
    np.testing.assert_allclose(out[len(PROMPT_B) :], EXPECTED["fork_prefill_logits"], atol=ATOL)


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_greedy_with_weights_from_a_tensor_cache(target, tmp_path):
    """Weights read by vm.builtin.tensor_cache.load from the cache apache-tvm 0.27's tooling
    (tvm.contrib.tvmjs.dump_tensor_cache) wrote for this model: tests/artifacts/tensor_cache."""
    from backend_testing.devices import device_or_skip
    from llm_support import LLM_DIR

    dev = tvm.cpu() if target == "cpu" else device_or_skip(tvm, tvm.opencl(0), 4, "OpenCL")
    cache_dir = LLM_DIR.parent / "tensor_cache" / "tiny_llama"
    g = tvm.get_global_func
    g("vm.builtin.tensor_cache.clear")()
    try:
        g("vm.builtin.tensor_cache.load")(str(cache_dir), dev.dlpack_device_type(), dev.index)
        weights = list(g("vm.builtin.param_array_from_cache_by_name")(META["param_names"]))
    finally:
        g("vm.builtin.tensor_cache.clear")()
    assert all(w.device == dev for w in weights)
    eng = Engine(tvm, library_path(target, tmp_path), dev, weights_of(EXPECTED), CONFIG)
    eng.params = weights
    tokens, _ = eng.greedy(0, PROMPT, STEPS)
    assert tokens == EXPECTED["greedy_tokens"].tolist()


def test_fine_grained_self_cross_attention_and_merge(cpu_lib):
    """self_attention (new tokens, causal) + cross_attention (cached tokens) merged by the
    model's merge kernel equals attention over both, computed with numpy."""
    eng = engine(cpu_lib)
    eng.add_sequence(0)
    eng.prefill({0: PROMPT[:7]})
    heads, kv_heads, d = CONFIG["num_heads"], CONFIG["num_kv_heads"], CONFIG["head_dim"]
    cached_k = tvm.runtime.empty((CONFIG["num_layers"], 7, kv_heads, d), "float32")
    cached_v = tvm.runtime.empty((CONFIG["num_layers"], 7, kv_heads, d), "float32")
    eng.cache_call("debug_get_kv", 0, 0, 7, cached_k, cached_v)
    rng = np.random.default_rng(0)
    n, scale = 5, d**-0.5
    q = rng.standard_normal((n, heads, d)).astype("float32")
    k = rng.standard_normal((n, kv_heads, d)).astype("float32")
    v = rng.standard_normal((n, kv_heads, d)).astype("float32")
    tvm.get_global_func("vm.builtin.kv_state_begin_forward")(
        eng.cache, tvm.runtime.ShapeTuple([0]), tvm.runtime.ShapeTuple([n])
    )
    o_self, lse_self = tvm.runtime.empty((n, heads, d), "float32"), tvm.runtime.empty((n, heads), "float32")
    o_cross, lse_cross = tvm.runtime.empty((n, heads, d), "float32"), tvm.runtime.empty((n, heads), "float32")
    t = tvm.runtime.tensor
    eng.cache_call("self_attention", 1, scale, t(q), t(k), t(v), o_self, lse_self)
    eng.cache_call("cross_attention", 1, scale, t(q), o_cross, lse_cross)
    out = eng.cache_call("merge_attn_output_inplace", o_self, lse_self, o_cross, lse_cross)
    keys = np.concatenate([cached_k.numpy()[1], k]).repeat(heads // kv_heads, axis=1)
    values = np.concatenate([cached_v.numpy()[1], v]).repeat(heads // kv_heads, axis=1)
    scores = np.einsum("qhd,khd->hqk", q, keys) * scale
    scores[:, np.arange(n)[:, None] < np.arange(7 + n)[None, :] - 7] = -np.inf  # causal on new
    p = np.exp(scores - scores.max(-1, keepdims=True))
    want = np.einsum("hqk,khd->qhd", p / p.sum(-1, keepdims=True), values)
    np.testing.assert_allclose(out[0].numpy(), want, atol=1e-5)
