"""The Relax VM profiler on CUDA, against the fake driver: kernels of apache-tvm 0.27's Relax MLP
(tests/artifacts/relax/mlp_cuda.so) are attributed to cuda:0 and timed with the backend's timer
(runtime.timer.cuda: a pair of CUDA events around each kernel, read after the stop), without
synchronising the stream around every call. On a GPU the same report must show real times."""

from __future__ import annotations

import fakes
import pytest
from cuda_support import HERE, parse_log

from conftest import ARTIFACTS, REPO, child_result, run_python

CHILD = f"""
import sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from children.on_fake_cuda import *
dev = tvm.cuda(0)
vm = tvm.runtime.vm.VirtualMachine(
    tvm.runtime.load_module({str(ARTIFACTS / "relax" / "mlp_cuda.so")!r}), dev)
data = np.load({str(ARTIFACTS / "relax" / "mlp.npz")!r})
args = [tvm.runtime.tensor(data[k], dev) for k in ("x", "w1", "b1", "w2", "b2")]
vm["main"](*args)
dev.sync()
clear()
report = vm.profile("main", *args)
calls = [[c.name, c.category, c.device, c.device_us, c.duration_us] for c in report.calls]
result(calls=calls, log=log(), kernel_us=report.kernel_us, total_us=report.total_us)
"""


@pytest.fixture(scope="module")
def fake():
    return str(fakes.build("cuda"))


def test_kernels_timed_with_cuda_events(fake):
    r = child_result(run_python(CHILD, env={"TVM_CUDA_DRIVER_LIBRARY": fake}))
    kernels = [c for c in r["calls"] if c[1] == "kernel"]
    assert kernels, r["calls"]
    assert all(c[2] == "cuda:0" for c in kernels), kernels
    on_gpu = [c for c in r["calls"] if c[2] == "cuda:0" and c[1] != "vm_function"]
    lines = r["log"].splitlines()
    launches = [i for i, line in enumerate(lines) if line.startswith("launch ")]
    # One launch per kernel call, each between the two events of its own timer; every call on
    # the GPU (kernels, and builtins on its tensors) timed by one event pair.
    assert len(launches) == len(kernels), r["log"]
    for i in launches:
        assert lines[i - 1].startswith("event_record") and lines[i + 1].startswith("event_record"), lines
    assert len(parse_log(r["log"], "event_record")) == 2 * len(on_gpu), r["log"]
    # With a timer the profiler waits for each call's stop event, not for the whole stream: no
    # stream_sync between the first timed call and the last (the run's own syncs are outside).
    records = [i for i, line in enumerate(lines) if line.startswith("event_record")]
    syncs = [i for i, line in enumerate(lines) if line.startswith("stream_sync")]
    assert not [i for i in syncs if records[0] < i < records[-1]], r["log"]
    # Kernel times are the timer's (the fake's event clock), not the host's.
    assert all(c[3] > 0 and c[3] != c[4] for c in kernels), kernels
    assert r["kernel_us"] == sum(c[3] for c in kernels)
