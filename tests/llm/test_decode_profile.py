"""A decode step of the tiny decoder (tests/artifacts/llm): the ordinary run (null_value,
make_shape and tuple_getitem inline, src/core/vm/inline_builtins.h) and the instrumented run
(every builtin called) give the same logits; under the profiler the KV cache's attention builtin
counts as kernel time, once per layer.
"""

from __future__ import annotations

import numpy as np
import pytest
from llm_support import Engine, library_path, load_expected, weights_of

import tvm

META, EXPECTED = load_expected()
CONFIG = META["config"]
PROMPT = EXPECTED["prompt"].tolist()
ATTENTION = "vm.builtin.attention_kv_cache_attention_with_fused_qkv"


@pytest.fixture(scope="module")
def cpu_lib(tmp_path_factory):
    return library_path("cpu", tmp_path_factory.mktemp("llm"))


def _engine_after_prompt(lib):
    eng = Engine(tvm, lib, tvm.cpu(), weights_of(EXPECTED), CONFIG)
    eng.add_sequence(0)
    eng.prefill({0: PROMPT})
    emb = eng._embed([PROMPT[-1]]).numpy().reshape(1, 1, -1)
    return eng, tvm.runtime.tensor(emb, eng.dev)


def _step(eng, run):
    shape = tvm.runtime.ShapeTuple
    eng._begin(eng.cache, shape([0]), shape([1]))
    try:
        return run()
    finally:
        eng._end(eng.cache)


def test_inlined_and_called_builtins_give_the_same_decode(cpu_lib):
    eng, x = _engine_after_prompt(cpu_lib)
    fast = _step(eng, lambda: eng.vm["decode"](x, eng.cache, eng.params))[0].numpy()
    # With an instrument set the VM calls every builtin (its slow path never inlines).
    eng, x = _engine_after_prompt(cpu_lib)
    seen = []
    eng.vm.set_instrument(lambda func, name, before, *rest: seen.append(name) if before else None)
    slow = _step(eng, lambda: eng.vm["decode"](x, eng.cache, eng.params))[0].numpy()
    np.testing.assert_array_equal(fast, slow)
    for builtin in ("vm.builtin.null_value", "vm.builtin.make_shape", "vm.builtin.tuple_getitem"):
        assert builtin in seen


def test_attention_builtin_counts_as_kernel_time(cpu_lib):
    eng, x = _engine_after_prompt(cpu_lib)
    report = _step(eng, lambda: eng.vm.profile("decode", x, eng.cache, eng.params))
    attention = [c for c in report.calls if c.name == ATTENTION]
    assert len(attention) == CONFIG["num_layers"]
    assert all(c.category == "kernel" for c in attention)
    assert report.kernel_us >= sum(c.duration_us for c in attention)
    rows = [r for r in report.rows() if r.name == ATTENTION]
    assert [(r.category, r.calls) for r in rows] == [("kernel", CONFIG["num_layers"])]
