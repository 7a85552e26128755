"""The RPC proxy: servers that connect *out* (``rpc_server --through-proxy``) and clients that
connect to the proxy with a key, paired by our ``tvm.exec.rpc_proxy`` or apache-tvm 0.27's,
mixed with apache-tvm's client, server and tracker."""

from __future__ import annotations

import logging
import socket
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rpc_support import (  # noqa: F401
    Proc,
    apache_python,
    free_port,
    run_apache_client,
)
from test_rpc_tracker_client import procs, run_add_with_our_client  # noqa: F401


def start_our_proxy(tmp: Path, *extra: str) -> Proc:
    """Our proxy as a command (``python -m tvm.exec.rpc_proxy``)."""
    argv = [sys.executable, "-m", "tvm.exec.rpc_proxy", "--host", "127.0.0.1", "--port", "0"]
    return Proc([*argv, "--port-end", "1", *extra], tmp / f"proxy-{time.monotonic_ns()}.log")


@pytest.fixture
def proxy_in_process(caplog: pytest.LogCaptureFixture) -> Iterator[Any]:
    """Starts our ``tvm.rpc.Proxy`` in this process (no interpreter start-up); its log goes to
    ``caplog``."""
    from tvm.rpc import Proxy

    caplog.set_level(logging.INFO, logger="tvm.rpc.proxy")
    started: list[Any] = []

    def start(**options: Any) -> Any:
        started.append(Proxy("127.0.0.1", 0, 1, **options).start())
        return started[-1]

    yield start
    for proxy in started:
        proxy.terminate()


def wait_until(done: Any, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"no {what} within {timeout}s"
        time.sleep(0.05)


def start_apache_proxy(python: str, tmp: Path) -> Proc:
    port = free_port()
    argv = [python, "-m", "tvm.exec.rpc_proxy", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--port-end", str(port + 1), "--web-port", str(free_port())]
    return Proc(argv, tmp / "apache-proxy.log", port=port)


def server_through_proxy(python: str, proxy: Any, key: str, tmp: Path) -> Proc:
    """An RPC server (ours with sys.executable, apache-tvm's with its python) behind ``proxy``."""
    argv = [python, "-m", "tvm.exec.rpc_server", "--through-proxy", "--host", "127.0.0.1"]
    argv += ["--port", str(proxy.port), "--key", key]
    return Proc(argv, tmp / f"server-{key}-{time.monotonic_ns()}.log", port=proxy.port)


def test_apache_client_through_our_proxy_to_our_server(apache_python, tmp_path, procs):  # noqa: F811
    proxy = start_our_proxy(tmp_path)
    procs.append(proxy)
    server = server_through_proxy(sys.executable, proxy, "nat-board", tmp_path)
    procs.append(server)
    # Three sessions in a row: after each one the server connects to the proxy again.
    results = run_apache_client(
        apache_python, proxy.port, "kernel:cpu:add", "error", "copies:cpu", key="nat-board"
    )
    assert results[0]["device"].endswith("cpu:0") and results[0]["mean_s"] > 0
    assert "missing.so" in results[1]["messages"][1]
    assert server.log().count("via proxy, serving in") == 3
    assert "paired" in proxy.log()


def test_our_client_through_our_proxy_to_apache_server(apache_python, tmp_path, procs, proxy_in_process):  # noqa: F811
    from tvm import rpc

    proxy = proxy_in_process()
    procs.append(server_through_proxy(apache_python, proxy, "theirs", tmp_path))
    for _ in range(2):  # apache-tvm's server reconnects to the proxy after a session too
        with rpc.connect("127.0.0.1", proxy.port, key="theirs", session_timeout=60) as sess:
            assert sess.server_key == "server:theirs"
            run_add_with_our_client(sess, "cpu")


def test_apache_proxy_relays_our_server_and_client(apache_python, tmp_path, procs):  # noqa: F811
    from tvm import rpc

    proxy = start_apache_proxy(apache_python, tmp_path)
    procs.append(proxy)
    server = server_through_proxy(sys.executable, proxy, "ours", tmp_path)
    procs.append(server)
    with rpc.connect("127.0.0.1", proxy.port, key="ours") as sess:
        run_add_with_our_client(sess, "cpu")
    assert server.logged("via proxy"), server.log()


def test_our_proxy_registers_servers_with_apache_tracker(
    apache_python,  # noqa: F811
    tmp_path,
    procs,  # noqa: F811
    proxy_in_process,
):
    from tvm import rpc
    from tvm.rpc.client import RPCError

    tracker_port = free_port()
    # The proxy keeps trying to reach its tracker, so our server starts while apache-tvm's
    # (slow to import) tracker does.
    proxy = proxy_in_process(tracker_addr=("127.0.0.1", tracker_port))
    procs.append(server_through_proxy(sys.executable, proxy, "farm", tmp_path))
    argv = [apache_python, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(tracker_port)]
    procs.append(
        Proc([*argv, "--port-end", str(tracker_port + 1)], tmp_path / "tracker.log", port=tracker_port)
    )
    client = rpc.connect_tracker("127.0.0.1", tracker_port)
    for _ in range(2):  # after each session the server connects again and is announced again
        with client.request("farm", session_timeout=60) as sess:
            run_add_with_our_client(sess, "cpu")
    servers = [s["key"] for s in client.summary()["server_info"]]
    assert "server:proxy[farm]" in servers, servers
    # with a tracker, only match keys the tracker handed out are served
    with pytest.raises(RPCError, match="no server that matches key='farm'"):
        rpc.connect("127.0.0.1", proxy.port, key="farm")


def test_proxy_refuses_clearly_and_keeps_serving(tmp_path, procs, proxy_in_process, caplog):  # noqa: F811
    from tvm import rpc
    from tvm.rpc.client import RPCError

    proxy = proxy_in_process(timeout_client=1, timeout_server=1)
    # a client asking for a key nobody serves: a clear error once the wait times out
    t0 = time.monotonic()
    with pytest.raises(RPCError, match="no server that matches key='nobody'"):
        rpc.connect("127.0.0.1", proxy.port, key="nobody")
    assert time.monotonic() - t0 < 10
    # a client that gives up first gets a clear error too, not a hang
    with pytest.raises(RPCError, match="no server with key='nobody'"):
        rpc.connect("127.0.0.1", proxy.port, key="nobody", timeout=0.3)
    # something that is not a TVM peer is dropped
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as junk:
        junk.sendall(b"GET / HTTP/1.0\r\n\r\n")
        try:
            assert junk.recv(16) == b""
        except ConnectionResetError:
            pass  # closed with our request unread: also a drop
    # a server waits at most timeout_server for a client, then connects again
    procs.append(server_through_proxy(sys.executable, proxy, "board", tmp_path))
    wait_until(lambda: "dropping server 'board'" in caplog.text, "server timeout")
    wait_until(lambda: caplog.text.count("server 'board' from") >= 2, "server reconnection")
    with rpc.connect("127.0.0.1", proxy.port, key="board") as sess:
        assert sess.cpu().exist
    assert "no partner within 1s" in caplog.text and "not a TVM RPC peer" in caplog.text


def test_second_server_with_the_same_key_is_refused(tmp_path, procs, proxy_in_process, caplog):  # noqa: F811
    from tvm import rpc
    from tvm.rpc.base import RPC_CODE_SUCCESS, RPC_MAGIC, send_key
    from tvm.rpc.server import RPCServer

    proxy = proxy_in_process()
    server = server_through_proxy(sys.executable, proxy, "solo", tmp_path)
    procs.append(server)
    wait_until(lambda: "server 'solo' from" in caplog.text, "server at the proxy")
    second = RPCServer("127.0.0.1", proxy.port, key="solo", is_proxy=True)
    with pytest.raises(ValueError, match="already has a server with key 'solo'"):
        second.serve_forever()
    # a client that vanishes in the middle of its first packet is dropped ...
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as raw:
        raw.sendall(struct.pack("<i", RPC_MAGIC))
        send_key(raw, "client:solo")
        assert struct.unpack("<i", raw.recv(4))[0] == RPC_CODE_SUCCESS
        raw.sendall(struct.pack("<Q", 1000) + b"\0" * 10)
    # ... and the first server, back at the proxy, serves the next client
    with rpc.connect("127.0.0.1", proxy.port, key="solo") as sess:
        assert sess.cpu().exist
    assert "that key is taken" in caplog.text
    # (its first packet, INIT_SERVER, is read under the handshake deadline, before a session starts)
    assert server.logged("'client:solo' via proxy failed: connection closed after 10 of 1000 bytes"), (
        server.log()
    )


def test_commands_reject_bad_options(capsys):
    from tvm.exec import rpc_proxy, rpc_server

    for extra, message in (
        (["--web-port", "8888"], "no websocket"),
        (["--tracker", "nowhere"], "HOST:PORT"),
        (["--timeout-client", "0"], "timeout_client must be a positive"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            rpc_proxy.main(["--port", "0", "--port-end", "1", *extra])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        rpc_server.main(["--through-proxy", "--tracker", "h:1", "--key", "k"])
    assert exit_info.value.code == 2 and "start the proxy with --tracker" in capsys.readouterr().err
