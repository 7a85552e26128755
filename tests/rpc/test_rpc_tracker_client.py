"""Trackers and our client: our server registers with apache-tvm 0.27's tracker; our tracker
serves apache-tvm's servers and clients; our pure-Python client drives apache-tvm's server and
ours (directly and through a tracker)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest
from rpc_support import (  # noqa: F401
    Proc,
    apache_python,
    free_port,
    our_server,
    run_apache_client,
    start_our_server,
)

from conftest import ARTIFACTS, run_python


def start_apache_tracker(python: str, tmp) -> Proc:
    port = free_port()
    argv = [python, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(port)]
    return Proc([*argv, "--port-end", str(port + 1)], tmp / "apache-tracker.log", port=port)


def start_our_tracker(tmp) -> Proc:
    argv = [
        sys.executable,
        "-m",
        "tvm.exec.rpc_tracker",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--port-end",
        "1",
    ]
    return Proc(argv, tmp / "our-tracker.log")


def start_apache_server(python: str, tmp, *extra: str) -> Proc:
    port = free_port()
    argv = [python, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(port)]
    return Proc([*argv, "--port-end", str(port + 1), *extra], tmp / f"apache-server-{port}.log", port=port)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in reversed(started):
        p.stop()


def test_our_server_registers_with_apache_tracker(apache_python, tmp_path, procs):  # noqa: F811
    tracker = start_apache_tracker(apache_python, tmp_path)
    procs.append(tracker)
    procs.append(start_our_server(tmp_path, "--tracker", f"127.0.0.1:{tracker.port}", "--key", "tiny-board"))
    # two requests in a row: after each session the server puts itself back in the queue
    results = run_apache_client(
        apache_python, 0, "tracker", "tracker", tracker_port=tracker.port, key="tiny-board"
    )
    for r in results:
        assert r["device"].endswith("cpu:0") and r["mean_s"] > 0
        assert r["summary_keys"] == ["tiny-board"]


def test_our_tracker_serves_apache_servers_and_clients(apache_python, tmp_path, procs):  # noqa: F811
    tracker = start_our_tracker(tmp_path)
    procs.append(tracker)
    addr = f"127.0.0.1:{tracker.port}"
    procs.append(start_our_server(tmp_path, "--tracker", addr, "--key", "ours"))
    procs.append(start_apache_server(apache_python, tmp_path, "--tracker", addr, "--key", "theirs"))
    for key in ("ours", "theirs"):
        (r,) = run_apache_client(apache_python, 0, "tracker", tracker_port=tracker.port, key=key)
        assert r["mean_s"] > 0
        assert {"ours", "theirs"} <= set(r["summary_keys"])


def run_add_with_our_client(sess, target: str) -> float:
    sess.upload(str(ARTIFACTS / target / "add.so"))
    mod = sess.load_module("add.so")
    dev = sess.device(target)
    assert dev.exist
    data = np.load(ARTIFACTS / target / "add.npz")
    suffix = "_0" if target == "vulkan" else ""  # the Vulkan fixtures number their calls
    a, b = dev.tensor(data["a" + suffix]), dev.tensor(data["b" + suffix])
    want = data["c" + suffix]
    c = dev.empty(want.shape, "float32")
    mod["add"](a, b, c)
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-6)
    c2 = c.copyto(dev)  # a server-side copy
    np.testing.assert_array_equal(c2.numpy(), want)
    res = mod.time_evaluator("add", dev, number=10, repeat=3)(a, b, c)
    assert len(res.results) == 3 and res.mean > 0
    with pytest.raises(Exception, match="RPCError"):
        mod["add"](a, b)  # wrong arity: a remote error, raised here
    return res.mean


def test_our_client_drives_apache_server(apache_python, tmp_path, procs):  # noqa: F811
    from tvm import rpc

    server = start_apache_server(apache_python, tmp_path)
    procs.append(server)
    with rpc.connect("127.0.0.1", server.port) as sess:
        run_add_with_our_client(sess, "cpu")  # apache-tvm's PyPI wheel has CPU only
        assert sess.download("add.so")[:4] == b"\x7fELF"


@pytest.mark.parametrize("target", ["cpu", "opencl", "vulkan"])
def test_our_client_drives_our_server(our_server, target):  # noqa: F811
    from tvm import rpc

    with rpc.connect("127.0.0.1", our_server.port) as sess:
        run_add_with_our_client(sess, target)
        assert sess.listdir() == ["add.so"]


def test_our_client_through_our_tracker(tmp_path, procs):
    from tvm import rpc

    tracker = start_our_tracker(tmp_path)
    procs.append(tracker)
    procs.append(start_our_server(tmp_path, "--tracker", f"127.0.0.1:{tracker.port}", "--key", "board"))
    client = rpc.connect_tracker("127.0.0.1", tracker.port)
    for _ in range(2):
        with client.request("board", session_timeout=60) as sess:
            run_add_with_our_client(sess, "cpu")
    assert client.summary()["queue_info"]["board"]["pending"] == 0
    assert "board" in client.text_summary()


def test_import_tvm_does_not_import_rpc():
    proc = run_python(
        """
        import sys, tvm
        assert "tvm.rpc" not in sys.modules and "tvm.exec" not in sys.modules
        from tvm import rpc
        assert callable(rpc.connect) and "tvm.rpc.server" not in sys.modules
        print("lazy ok")
        """
    )
    assert "lazy ok" in proc.stdout
