"""The non-paged attention KV cache builtins (vm.builtin.attention_kv_cache_create/append/
update/view/window_override*/array_*) give what apache-tvm 0.27's give for the same calls."""

from __future__ import annotations

import numpy as np
import pytest
from legacy_cache_scenario import legacy_cache_scenario
from llm_support import load_expected

import tvm

_, EXPECTED = load_expected()
SEED = 20261125


def test_scenario_matches_apache_tvm():
    got = legacy_cache_scenario(tvm, np.random.default_rng(SEED + 2))
    np.testing.assert_array_equal(got["legacy_views"], EXPECTED["legacy_views"])


def test_errors():
    g = tvm.get_global_func
    rows = tvm.runtime.tensor(np.zeros((2, 3), "float32"))
    cache = g("vm.builtin.attention_kv_cache_create")(rows, tvm.runtime.ShapeTuple([4, 3]), -1)
    with pytest.raises(ValueError, match="row shape"):
        g("vm.builtin.attention_kv_cache_append")(cache, tvm.runtime.tensor(np.zeros((1, 4), "float32")))
    with pytest.raises(ValueError, match="holds 2"):
        g("vm.builtin.attention_kv_cache_update")(cache, tvm.runtime.tensor(np.zeros((3, 3), "float32")))
    with pytest.raises(ValueError, match="cannot pop 3"):
        g("vm.builtin.attention_kv_cache_array_popn")([cache], 3)
    with pytest.raises(ValueError, match="do not fit a window"):
        g("vm.builtin.attention_kv_cache_window_override_with_sinks")(cache, rows, 3, 2)
    with pytest.raises(ValueError, match="does not match"):
        g("vm.builtin.attention_kv_cache_view")(cache, tvm.runtime.ShapeTuple([5, 3]))
