"""apache-tvm 0.27's own RPC client drives our ``python -m tvm.exec.rpc_server`` over loopback:
upload, load, run on every local device, device copies, time_evaluator, Relax VM, remote errors,
session timeouts."""

from __future__ import annotations

import pytest
from rpc_support import apache_python, our_server, run_apache_client  # noqa: F401

# One client process per device: each step below is its own RPC session.
DEVICE_STEPS = {
    "cpu": [
        "kernel:cpu:add",
        "kernel:cpu:matmul",
        "kernel:cpu:multi_out",
        "kernel:cpu:workspace",
        "copies:cpu",
        "vm:cpu:mlp",
        "vm:cpu:mlp_dyn",
        "vm:cpu:convnet",
    ],
    "opencl": [
        "kernel:opencl:add",
        "kernel:opencl:matmul",
        "copies:opencl",
        "vm:opencl:mlp_dyn",
        "vm:opencl:convnet",
    ],
    "vulkan": ["kernel:vulkan:add", "kernel:vulkan:dyn_muladd", "copies:vulkan"],
}


@pytest.mark.parametrize("device", sorted(DEVICE_STEPS))
def test_apache_client_runs_kernels_copies_and_models(apache_python, our_server, device):  # noqa: F811
    steps = DEVICE_STEPS[device]
    results = run_apache_client(apache_python, our_server.port, *steps)
    assert [r["step"] for r in results] == steps
    for r in results:
        assert r["device"].endswith(f"{device}:0"), r
        if r["step"].startswith("kernel:"):
            assert r["mean_s"] > 0  # time_evaluator ran on the server and returned real timings
    assert our_server.alive()


def test_remote_errors_come_back_as_rpc_errors(apache_python, our_server):  # noqa: F811
    (result,) = run_apache_client(apache_python, our_server.port, "error")
    wrong_args, missing = result["messages"]
    assert "Expected 3 arguments" in wrong_args
    assert "upload it first" in missing


def test_session_timeout_ends_the_call_with_rpc_session_timeout_error(apache_python, our_server):  # noqa: F811
    (result,) = run_apache_client(apache_python, our_server.port, "timeout", session_timeout=1.5)
    assert result["error"] == "RPCSessionTimeoutError", result
    assert "session has expired" in result["message"]
    assert result["elapsed"] < 15
    # the server is still serving after killing the timed-out session
    (after,) = run_apache_client(apache_python, our_server.port, "kernel:cpu:add")
    assert after["mean_s"] > 0
    assert our_server.logged("timed out"), our_server.log()
