"""The Relax VM profiler on CUDA, against the fake driver: kernels of apache-tvm 0.27's Relax MLP
(tests/artifacts/relax/mlp_cuda.so) are attributed to cuda:0 and timed with the backend's timer
(runtime.timer.cuda: a pair of CUDA events around each kernel, read after the stop), and the
device is synchronised around every kernel. On a GPU the same report must show real times."""

from __future__ import annotations

import pytest
from cuda_support import HERE, build_fake_driver, parse_log

from conftest import ARTIFACTS, REPO, child_result, run_python

CHILD = f"""
import json, os, sys
import numpy as np
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
import tvm
from cuda_support import fake_driver
fake = fake_driver(os.environ["TVM_CUDA_DRIVER_LIBRARY"])
dev = tvm.cuda(0)
vm = tvm.runtime.vm.VirtualMachine(
    tvm.runtime.load_module({str(ARTIFACTS / "relax" / "mlp_cuda.so")!r}), dev)
data = np.load({str(ARTIFACTS / "relax" / "mlp.npz")!r})
args = [tvm.runtime.tensor(data[k], dev) for k in ("x", "w1", "b1", "w2", "b2")]
vm["main"](*args)
dev.sync()
fake.fake_cuda_clear_log()
report = vm.profile("main", *args)
calls = [[c.name, c.category, c.device, c.device_us] for c in report.calls]
print("RESULT:" + json.dumps(dict(calls=calls, log=fake.fake_cuda_log().decode(),
                                   kernel_us=report.kernel_us, total_us=report.total_us)))
"""


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return str(build_fake_driver(tmp_path_factory.mktemp("fake-cuda")))


def test_kernels_timed_with_cuda_events(fake):
    r = child_result(run_python(CHILD, env={"TVM_CUDA_DRIVER_LIBRARY": fake}))
    kernels = [c for c in r["calls"] if c[1] == "kernel"]
    assert kernels, r["calls"]
    assert all(c[2] == "cuda:0" for c in kernels), kernels
    on_gpu = [c for c in r["calls"] if c[2] == "cuda:0" and c[1] != "vm_function"]
    lines = r["log"].splitlines()
    launches = [i for i, line in enumerate(lines) if line.startswith("launch ")]
    # One launch per kernel call, each between the two events of its own timer; every call on
    # the GPU (kernels, and builtins on its tensors) timed by one event pair; the device waited
    # on after every one of them.
    assert len(launches) == len(kernels), r["log"]
    for i in launches:
        assert lines[i - 1].startswith("event_record") and lines[i + 1].startswith("event_record"), lines
    assert len(parse_log(r["log"], "event_record")) == 2 * len(on_gpu), r["log"]
    assert len(parse_log(r["log"], "stream_sync")) >= len(on_gpu), r["log"]
    assert r["kernel_us"] <= r["total_us"]
