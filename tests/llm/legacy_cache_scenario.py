"""One scenario of apache-tvm 0.27's non-paged attention KV cache builtins, shared by the fixture
generator (tests/artifacts/generate_llm.py runs it on apache-tvm and records the result) and the
tests (which run it on tvm-runtime).  Needs only the runtime API, no compiler."""

from __future__ import annotations

import numpy as np


def legacy_cache_scenario(tvm_mod, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Calls of vm.builtin.attention_kv_cache_{create,append,update,view,window_override*,
    array_popn,array_clear} on one runtime; every view read back, concatenated.  The same code
    runs in the tests against tvm-runtime (``tvm_mod`` is the ``tvm`` module to use)."""
    g = tvm_mod.get_global_func
    rows = lambda n: tvm_mod.runtime.tensor(rng.standard_normal((n, 2, 3)).astype("float32"))  # noqa: E731
    shape = tvm_mod.runtime.ShapeTuple
    views: list[np.ndarray] = []
    view = lambda c: views.append(g("vm.builtin.attention_kv_cache_view")(c).numpy().ravel())  # noqa: E731
    a = g("vm.builtin.attention_kv_cache_create")(rows(2), shape([2, 2, 3]), -1)
    view(a)
    for n in (1, 3, 5):  # grows past the reserved 2 rows
        a = g("vm.builtin.attention_kv_cache_append")(a, rows(n))
        view(a)
    a = g("vm.builtin.attention_kv_cache_update")(a, rows(11))
    view(a)
    g("vm.builtin.attention_kv_cache_array_popn")([a], 4)
    view(a)
    w = g("vm.builtin.attention_kv_cache_create")(rows(1), shape([4, 2, 3]), 0)
    for n in (3, 2, 4, 1):  # a window of 6 rows: wraps around twice
        w = g("vm.builtin.attention_kv_cache_window_override")(w, rows(n), 6)
        view(w)
    s = g("vm.builtin.attention_kv_cache_create")(rows(1), shape([8, 2, 3]), 0)
    for n in (4, 3, 3):  # a window of 6 rows whose first 2 are attention sinks
        s = g("vm.builtin.attention_kv_cache_window_override_with_sinks")(s, rows(n), 6, 2)
        view(s)
    g("vm.builtin.attention_kv_cache_array_clear")([a, w, s])
    w = g("vm.builtin.attention_kv_cache_window_override")(w, rows(2), 6)
    view(w)
    return {"legacy_views": np.concatenate(views).astype("float32")}
