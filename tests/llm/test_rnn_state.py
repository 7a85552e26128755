"""vm.builtin.rnn_state_*: the RNN state behaves like apache-tvm 0.27's (the generator recorded
what 0.27 reads back in the same scenario, with getter/setter kernels that 0.27 compiled)."""

from __future__ import annotations

import numpy as np
import pytest
from llm_support import LLM_DIR, load_expected

import tvm

_, EXPECTED = load_expected()
LAYERS, SEQS, HISTORY, SIZES = 2, 3, 3, (4, 6)  # as in tests/artifacts/generate_llm.py
SEED = 20261125


def g(name):
    return tvm.get_global_func(f"vm.builtin.{name}")


def shape(xs):
    return tvm.runtime.ShapeTuple(list(xs))


@pytest.fixture
def state():
    mod = tvm.runtime.load_module(str(LLM_DIR / "rnn_state_kernels_cpu.so"))
    init = [tvm.runtime.tensor(np.full(n, 0.5 * (k + 1), "float32")) for k, n in enumerate(SIZES)]
    return g("rnn_state_create")(
        LAYERS,
        SEQS,
        HISTORY,
        [mod[f"rnn_get_{n}"] for n in SIZES],
        [mod[f"rnn_set_{n}"] for n in SIZES],
        init,
    )


def test_scenario_matches_apache_tvm(state):
    rng = np.random.default_rng(SEED + 1)
    reads = []

    def step(ids, lengths, write):
        g("kv_state_begin_forward")(state, shape(ids), shape(lengths))
        for layer in range(LAYERS):
            for k, n in enumerate(SIZES):
                got = tvm.runtime.empty((len(ids), n), "float32")
                g("rnn_state_get")(state, layer, k, got)
                reads.append(got.numpy().ravel())
                if write:
                    data = rng.standard_normal((len(ids), n)).astype("float32")
                    g("rnn_state_set")(state, layer, k, tvm.runtime.tensor(data))
        g("kv_state_end_forward")(state)

    g("kv_state_add_sequence")(state, 0)
    g("kv_state_add_sequence")(state, 1)
    step([0, 1], [4, 1], True)
    step([1, 0], [1, 1], True)
    step([0], [1], True)
    g("kv_state_fork_sequence")(state, 0, 2, -1)
    g("kv_state_popn")(state, 0, 2)
    step([0, 2, 1], [1, 1, 1], False)
    g("kv_state_remove_sequence")(state, 1)
    g("kv_state_add_sequence")(state, 7)
    step([7, 2], [1, 1], False)
    np.testing.assert_array_equal(np.concatenate(reads), EXPECTED["rnn_reads"])
    np.testing.assert_array_equal(
        g("rnn_state_debug_get")(state, 1, 1, 2).numpy(), EXPECTED["rnn_debug_get_l1_s1_seq2"]
    )


def test_errors(state):
    g("kv_state_add_sequence")(state, 0)
    g("kv_state_begin_forward")(state, shape([0]), shape([3]))
    g("kv_state_end_forward")(state)
    with pytest.raises(ValueError, match="can roll back 0 tokens"):
        g("kv_state_popn")(state, 0, 1)  # a 3-token step cannot be rolled back
    with pytest.raises(ValueError, match="only be forked at the end"):
        g("kv_state_fork_sequence")(state, 0, 1, 1)
    with pytest.raises(RuntimeError, match="no forward in progress"):
        g("rnn_state_get")(state, 0, 0, tvm.runtime.empty((1, 4), "float32"))
    with pytest.raises(ValueError, match="out of range"):
        g("rnn_state_debug_get")(state, 5, 0, 0)
    g("kv_state_add_sequence")(state, 1)
    g("kv_state_add_sequence")(state, 2)
    with pytest.raises(RuntimeError, match="sequence slots"):
        g("kv_state_add_sequence")(state, 3)
    with pytest.raises(ValueError, match="no sequence 9"):
        g("kv_state_begin_forward")(state, shape([9]), shape([1]))
