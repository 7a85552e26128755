"""The Relax VM profiler (``vm.profile``, tvm/runtime/profiling.py, src/core/vm/call_profiler.*)
on apache-tvm 0.27's Relax models (tests/artifacts/relax), on the CPU and on OpenCL (PoCL).

What is checked against what the VM really does: the kernels in the report are exactly the
kernels an instrument sees the VM call (same names, same counts), on the device of their tensors;
the report's parts add up to its total; the table, CSV, JSON and Chrome trace carry the same calls;
profiling leaves the VM on its fast path afterwards (results still match numpy), also after a
failed run; older scripts' ``profile=True`` and ``set_input`` + ``profile(name)`` work.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import numpy as np
import pytest
from vm_support import device_for, run_case_call, vm_cases

import tvm
from conftest import ARTIFACTS
from tvm.runtime.profiling import Report
from tvm.runtime.vm import VirtualMachine

TARGETS = ("cpu", "opencl")
MODELS = ("mlp", "mlp_dyn", "convnet")
CASES = [(t, c) for t in TARGETS for c in vm_cases(t) if c["name"] in MODELS]
IDS = [f"{t}-{c['name']}" for t, c in CASES]
BUILTIN_PREFIXES = ("vm.", "relax.", "runtime.", "tvm.", "ffi.")


def _vm(target: str, case_: dict, **kwargs) -> tuple[VirtualMachine, object, list]:
    dev = device_for(tvm, target)
    vm = VirtualMachine(tvm.runtime.load_module(str(ARTIFACTS / case_["file"])), dev, **kwargs)
    call = case_["calls"][0]
    data = np.load(ARTIFACTS / call["npz"])
    args = [tvm.runtime.tensor(data[a["key"]], dev) for a in call["args"]]
    return vm, dev, args


def _instrumented_calls(vm: VirtualMachine, args: list) -> Counter:
    """What the VM calls, seen through its instrument hook (independent of the profiler): a count
    per (name, device of the call's first accelerator tensor, else the CPU)."""
    seen: Counter = Counter()

    def instrument(func, name, before, ret, *rest):
        if before:
            devices = [str(a.device) for a in rest if isinstance(a, tvm.runtime.Tensor)]
            accel = [d for d in devices if not d.startswith("cpu")]
            seen[(str(name), accel[0] if accel else "cpu:0")] += 1
        return 0

    vm.set_instrument(instrument)
    vm["main"](*args)
    vm.set_instrument(None)
    return seen


@pytest.mark.parametrize(("target", "case_"), CASES, ids=IDS)
def test_report_lists_the_kernels_the_vm_calls(target, case_):
    vm, dev, args = _vm(target, case_)
    expected = _instrumented_calls(vm, args)
    report = vm.profile("main", *args)
    assert isinstance(report, Report)

    # Every call instruction once each, attributed to the device of its tensors.
    assert Counter((c.name, c.device) for c in report.calls) == expected
    kernels = {c.name for c in report.calls if c.category == "kernel"}
    assert kernels == {n for n, _ in expected if not n.startswith(BUILTIN_PREFIXES)}
    assert any(c.device == str(dev) for c in report.calls if c.category == "kernel"), report.calls
    for c in report.calls:
        if c.category == "kernel":
            assert c.duration_us > 0 and c.device_us > 0, c
        assert 0 <= c.start_us <= report.total_us + 1e-3, c
        assert c.start_us + c.duration_us <= report.total_us + 1.0, c
    assert any(c.category == "alloc" for c in report.calls), "no allocation builtin profiled"


@pytest.mark.parametrize(("target", "case_"), CASES, ids=IDS)
def test_report_parts_add_up(target, case_):
    vm, _, args = _vm(target, case_)
    report = vm.profile("main", *args)
    s = report.summary()
    parts = s["kernel_us"] + s["alloc_us"] + s["copy_us"] + s["builtin_us"] + s["interpreter_us"]
    leaves = [c for c in report.calls if c.category != "vm_function"]
    if target == "cpu":  # device time == host time: the parts are the total exactly
        assert parts == pytest.approx(s["total_us"], rel=1e-6, abs=1e-3)
    assert s["kernel_us"] <= s["total_us"] + 1e-3
    assert s["overhead_us"] == pytest.approx(s["total_us"] - s["kernel_us"], abs=1e-3)
    assert 0.0 <= s["overhead_fraction"] <= 1.0
    rows = report.rows()
    assert sum(r.calls for r in rows) == len(report.calls)
    leaf_rows = [r for r in rows if r.category != "vm_function"]
    by_kind = sum(c.device_us if c.category == "kernel" else c.duration_us for c in leaves)
    assert sum(r.total_us for r in leaf_rows) == pytest.approx(by_kind, rel=1e-9)
    for r in rows:
        assert r.mean_us == pytest.approx(r.total_us / r.calls)


@pytest.mark.parametrize("target", TARGETS)
def test_exports_carry_the_same_calls(target, tmp_path):
    (case_,) = [c for c in vm_cases(target) if c["name"] == "convnet"]
    vm, _, args = _vm(target, case_)
    report = vm.profile("main", *args)

    table = str(report)
    for r in report.rows():
        assert r.name in table
    assert "runtime overhead" in table

    parsed = list(csv.DictReader(io.StringIO(report.csv())))
    assert [(p["name"], int(p["calls"])) for p in parsed] == [(r.name, r.calls) for r in report.rows()]

    doc = json.loads(report.json())
    assert len(doc["calls"]) == len(report.calls)
    assert doc["summary"]["total_us"] == pytest.approx(report.total_us)

    path = tmp_path / "trace.json"
    report.save_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert len(events) == len(report.calls) + 1  # plus the run itself
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0 for e in events)
    assert Counter(e["name"] for e in events[1:]) == Counter(c.name for c in report.calls)


@pytest.mark.parametrize("target", TARGETS)
def test_vm_stays_fast_and_correct_after_profiling(target):
    (case_,) = [c for c in vm_cases(target) if c["name"] == "mlp"]
    vm, dev, args = _vm(target, case_, profile=True)  # older scripts pass profile=True
    vm.profile("main", *args)
    with pytest.raises(TypeError, match="expects"):
        vm.profile("main", *args, args[0])  # one argument too many
    with pytest.raises(AttributeError, match="no function 'nope'"):
        vm.profile("nope", *args)
    # A failed profiled run left no profiler behind: the next run is unprofiled and correct...
    for got, expected in run_case_call(tvm, vm, case_["calls"][0], dev):
        np.testing.assert_allclose(got, expected, rtol=case_["rtol"], atol=case_["atol"])
    # ... an instrument still sees every call, and a later profile works again.
    assert sum(_instrumented_calls(vm, args).values()) == len(vm.profile("main", *args).calls)


def test_set_input_then_profile_by_name():
    (case_,) = [c for c in vm_cases("cpu") if c["name"] == "mlp"]
    vm, _, args = _vm("cpu", case_)
    vm.set_input("main", *[a.numpy() for a in args])
    by_name = vm.profile("main")
    direct = vm.profile("main", *args)
    assert [c.name for c in by_name.calls] == [c.name for c in direct.calls]


def test_nested_vm_functions_are_not_counted_twice():
    # The model's main calls no other VM function, so build a report with one by hand: a VM
    # function event around two kernels contributes nothing to the kernel/builtin sums.
    from tvm.runtime.profiling import Call

    calls = [
        Call("inner", "vm_function", "cpu:0", 1.0, 8.0, 8.0, 0),
        Call("k1", "kernel", "cpu:0", 2.0, 3.0, 3.0, 1),
        Call("k2", "kernel", "cpu:0", 5.0, 2.0, 2.0, 1),
    ]
    report = Report(10.0, calls)
    assert report.kernel_us == 5.0
    assert report.interpreter_us == 5.0
    assert report.overhead_fraction == pytest.approx(0.5)
    assert [r.name for r in report.rows()] == ["k1", "k2", "inner"]
