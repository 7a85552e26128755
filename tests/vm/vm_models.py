"""Inputs and numpy references of the fixtures that ``make_fixtures.py`` builds.

Shared by the fixture generator (run under apache-tvm) and the tests (run under tvm-runtime), so
both check the artifacts against the same numbers. numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Global function the `misc` model's `ext` calls (destination-passing: fn(x, out)).
SCALE2 = "testing.vm.scale2"

RTOL = 1e-5
ATOL = 1e-5


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def cases(model: str) -> list[tuple[str, list[np.ndarray], Any]]:
    """(function, inputs, expected) triples; `expected` nests tuples like the VM's result."""
    if model == "control":
        x = (np.arange(4, dtype="float32") - np.float32(1.5)) * np.float32(0.5)
        y = _rng(1).standard_normal(4).astype("float32")
        true_, false_ = np.array(True), np.array(False)
        return [
            ("main", [x, true_], (x * 2, (x, x * 2))),
            ("main", [x, false_], (x + 1, (x, x + 1))),
            ("closure", [x, y], x + y),
        ]
    if model == "misc":
        out = []
        for n in (3, 5):
            x = _rng(n).standard_normal((n, 4)).astype("float32")
            out.append(("main", [x], (x.reshape(n * 4) * 2)))
        v = _rng(7).standard_normal(4).astype("float32")
        out.append(("ext", [v], v * 2))
        return out
    if model == "compiled":
        rng = _rng(3)
        w = (rng.standard_normal((16, 32)) * 0.3).astype("float32")
        b = (rng.standard_normal(32) * 0.1).astype("float32")
        out = []
        for n in (5, 2):
            x = rng.standard_normal((n, 16)).astype("float32")
            h = np.maximum(x.astype("float64") @ w + b, 0.0)
            out.append(("main", [x, w, b], (h.astype("float32"), h.sum(axis=1).astype("float32"))))
        return out
    raise KeyError(model)


def to_numpy(value: Any) -> Any:
    """Tensors -> numpy arrays, tuples/Arrays -> tuples (recursively)."""
    if hasattr(value, "numpy"):
        return value.numpy()
    if isinstance(value, (str, bytes)):
        return value
    try:
        return tuple(to_numpy(v) for v in value)
    except TypeError:
        return value


def assert_matches(got: Any, expected: Any, what: str = "") -> None:
    got = to_numpy(got)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{what}: {got!r} vs {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_matches(g, e, f"{what}[{i}]")
        return
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL, err_msg=what)


# The working-memory model (make_working_memory_fixture.py): two 3x3 max-pools, stride 1, pad 1.
WORKING_MEMORY_SHAPE = (1, 16, 256, 256)


def _max_pool_3x3_same(x: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    h, w = x.shape[2], x.shape[3]
    windows = [padded[:, :, i : i + h, j : j + w] for i in range(3) for j in range(3)]
    return np.maximum.reduce(windows)


def expected_working_memory(x: np.ndarray) -> np.ndarray:
    return _max_pool_3x3_same(_max_pool_3x3_same(x))
