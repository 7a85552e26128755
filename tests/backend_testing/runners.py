"""Checks every backend runs on its own copy of the shared artifact cases (the manifest runners):
results against numpy, threads, symbolic shapes, scalar arguments, copies."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from conftest import ARTIFACTS, case


def check_outputs(case_: dict[str, Any], outputs: list[tuple[str, Any, np.ndarray]]) -> None:
    """Compare run_kernel_call's outputs with the manifest's tolerances (in float64, so fp16
    cases compare at the case's tolerance rather than fp16's)."""
    assert outputs
    for key, out, expected in outputs:
        np.testing.assert_allclose(
            out.numpy().astype("float64"),
            expected.astype("float64"),
            rtol=case_["rtol"],
            atol=case_["atol"],
            err_msg=f"{case_['name']}: {key}",
        )


def run_in_threads(worker: Callable[[int], None], count: int = 4) -> list[BaseException]:
    """Run worker(0..count-1) on as many threads; the exceptions they raised (pytest only sees
    the main thread's)."""
    errors: list[BaseException] = []

    def guarded(seed: int) -> None:
        try:
            worker(seed)
        except Exception as err:  # noqa: BLE001 - collected and reported by the caller
            errors.append(err)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def check_concurrent_matmul(tvm: Any, target: str, dev: Any) -> None:
    """Four host threads launch the `matmul` case's kernel on one module and device."""
    c = case(target, "matmul")
    check_concurrent_launches(tvm, str(ARTIFACTS / c["file"]), c["function"], dev)


def check_concurrent_launches(tvm: Any, path: str, function: str, dev: Any, rounds: int = 20) -> None:
    """Four host threads each launch `function` of the artifact at `path`, a (64, 32) x (32, 48)
    float32 matmul, `rounds` times on one module and device, each checking its own result."""
    f = tvm.runtime.load_module(path)[function]

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        a_np = rng.standard_normal((64, 32)).astype("float32")
        b_np = rng.standard_normal((32, 48)).astype("float32")
        a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
        out = tvm.runtime.empty((64, 48), "float32", dev)
        for _ in range(rounds):
            f(a, b, out)
            np.testing.assert_allclose(out.numpy(), a_np @ b_np, rtol=1e-4, atol=1e-4)

    errors = run_in_threads(worker)
    assert not errors, errors


def check_symbolic_shape_sizes(tvm: Any, target: str, dev: Any) -> list[int]:
    """One `dyn_muladd` module called with n = 17, 1000, 17; the sizes that matched numpy."""
    c = case(target, "dyn_muladd")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    f = mod[c["function"]]
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    sizes = []
    for n in (17, 1000, 17):
        a = tvm.runtime.tensor(data[f"a_n{n}"], dev)
        b = tvm.runtime.tensor(data[f"b_n{n}"], dev)
        out = tvm.runtime.empty((n,), "float32", dev)
        f(a, b, out)
        np.testing.assert_allclose(out.numpy(), data[f"c_n{n}"], rtol=c["rtol"], atol=c["atol"])
        sizes.append(n)
    return sizes


def check_scalar_arguments(tvm: Any, target: str, dev: Any, rtol: float, atol: float = 0.0) -> None:
    """The `multi_out` kernel with float and int scalars that change between launches;
    `rtol`/`atol` bound alpha * a + b, whose rounding depends on the device's FMA use."""
    c = case(target, "multi_out")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(256).astype("float32")
    b_np = rng.standard_normal(256).astype("float32")
    a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
    o1, o2 = tvm.runtime.empty((256,), "float32", dev), tvm.runtime.empty((256,), "float32", dev)
    for alpha, beta in ((1.5, 3), (-0.25, -7), (0.0, 0)):
        mod["multi_out"](a, b, alpha, beta, o1, o2)
        np.testing.assert_allclose(o1.numpy(), a_np * np.float32(alpha) + b_np, rtol=rtol, atol=atol)
        np.testing.assert_allclose(o2.numpy(), a_np - np.float32(beta), rtol=1e-6)


def check_time_evaluator(tvm: Any, target: str, dev: Any) -> None:
    c = case(target, "add")
    mod = tvm.runtime.load_module(str(ARTIFACTS / c["file"]))
    data = np.load(ARTIFACTS / c["calls"][0]["npz"])
    a, b = tvm.runtime.tensor(data["a"], dev), tvm.runtime.tensor(data["b"], dev)
    out = tvm.runtime.empty((1024,), "float32", dev)
    res = mod.time_evaluator("add", dev, number=5, repeat=2)(a, b, out)
    assert len(res.results) == 2 and res.mean > 0
    np.testing.assert_allclose(out.numpy(), data["c"], rtol=1e-6)


def check_relax_case(tvm: Any, case_: dict[str, Any], mod: Any, dev: Any, root: Path = ARTIFACTS) -> None:
    """Every call of a Relax (`vm`) manifest case through vm["main"] on `dev` (npz paths
    relative to `root`)."""
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    for call in case_["calls"]:
        data = np.load(root / call["npz"])
        res = vm["main"](*[tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]])
        results = list(res) if case_["output_is_tuple"] else [res]
        # Every expected output, no more and no fewer: zip alone would stop at the shorter list.
        assert len(results) == len(call["outputs"]), (
            f"{case_['name']}: the model returned {len(results)} outputs, "
            f"the manifest expects {len(call['outputs'])} ({call['outputs']})"
        )
        for key, out in zip(call["outputs"], results, strict=True):
            np.testing.assert_allclose(out.numpy(), data[key], rtol=case_["rtol"], atol=case_["atol"])


def check_host_round_trip(tvm: Any, dev: Any, dtype: str) -> None:
    x = (np.arange(1000) % 7 - 3).astype(dtype)
    np.testing.assert_array_equal(tvm.runtime.tensor(x, dev).numpy(), x)


def check_device_to_device_copy(tvm: Any, dev: Any) -> None:
    x = np.random.default_rng(0).standard_normal((64, 33)).astype("float32")
    a = tvm.runtime.tensor(x, dev)
    b = a.copyto(dev)
    c = tvm.runtime.empty(x.shape, "float32", dev)
    b.copyto(c)
    np.testing.assert_array_equal(c.numpy(), x)
    np.testing.assert_array_equal(a.copyto(tvm.cpu(0)).numpy(), x)


def check_copies_honour_byte_offsets(tvm: Any, dev: Any) -> tuple[Any, np.ndarray]:
    """Host <-> device and device -> device copies of views at byte offsets; returns the
    tensor and the host copy of what it must now hold, for backend-specific follow-ups."""
    x = np.arange(100, dtype="float32")
    t = tvm.runtime.tensor(x, dev)
    view = t._create_view((10,), "float32", 40 * 4)
    np.testing.assert_array_equal(view.numpy(), x[40:50])
    view.copyfrom(np.full(10, -1.0, dtype="float32"))
    expected = x.copy()
    expected[40:50] = -1.0
    np.testing.assert_array_equal(t.numpy(), expected)
    # device -> device between views at different offsets
    dst = tvm.runtime.empty((100,), "float32", dev)
    dst.copyfrom(np.zeros(100, dtype="float32"))
    t._create_view((10,), "float32", 0).copyto(dst._create_view((10,), "float32", 90 * 4))
    got = dst.numpy()
    np.testing.assert_array_equal(got[90:], x[:10])
    assert not got[:90].any()
    return t, expected
