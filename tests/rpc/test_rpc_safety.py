"""The RPC server's safety options, driven by apache-tvm 0.27's unmodified client (and tracker):
slow and stalled clients, the session limit, idle sessions, --allow restrictions, the shared
secret and TLS.  Deadlines are short here (seconds) so the slow-client cases stay quick.

Timing is never measured: "not delayed" is shown by order (a valid client is served while the
stalled ones are still waiting for their deadline)."""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from rpc_support import (  # noqa: F401
    Proc,
    apache_python,
    call,
    closed_by_server,
    our_server,
    raw_session,
    run_apache_client,
    start_our_server,
)

import tvm.rpc
from conftest import ARTIFACTS

HANDSHAKE_S = 3
IDLE_S = 2
SECRET = "correct-horse-battery-staple"
TLS_DIR = Path(__file__).resolve().parent / "tls"


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def is_closed_by_server(sock: socket.socket, timeout: float) -> bool:
    """True when the server closes ``sock`` within ``timeout`` (what it sent before is skipped)."""
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
    except (TimeoutError, socket.timeout):
        return False
    except OSError:
        pass
    return True


def stalled_connection(port: int, first_bytes: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(first_bytes)
    return sock


def served(port: int) -> bool:
    """A raw session runs one call (checks the runtime answers)."""
    from tvm.rpc._protocol import Code

    sock = raw_session(port)
    try:
        return call(sock, "runtime.GetDeviceAttr", 1, 0, 0) == (Code.RETURN, [1, 1])
    finally:
        sock.close()


def finished_sessions(server: Proc) -> int:
    return server.log().count("finished serving")


@pytest.fixture(scope="module")
def limited_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    tmp = tmp_path_factory.mktemp("rpc-limited")
    server = start_our_server(
        tmp,
        *("--handshake-timeout", str(HANDSHAKE_S)),
        *("--max-sessions", "2"),
        *("--idle-timeout", str(IDLE_S)),
    )
    yield server
    server.stop()


# ------------------------------------------------------------------ slow and stalled clients


def test_trickling_client_is_cut_at_the_handshake_deadline_and_delays_nobody(apache_python, limited_server):  # noqa: F811
    from tvm.rpc import base

    # One byte every 0.5 s: with a timeout per recv (the old server) it was never cut, and the
    # sequential listener served nobody else meanwhile (65 s behind 7 bytes in the issue).
    sock = stalled_connection(limited_server.port)
    hello = struct.pack("<ii", base.RPC_MAGIC, 200) + b"client:" + b"x" * 193
    stop = threading.Event()
    sent = []

    def trickle() -> None:
        for byte in hello:
            if stop.wait(0.5):
                return
            try:
                sock.send(bytes([byte]))
            except OSError:
                return
            sent.append(byte)

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        assert served(limited_server.port)
        assert not is_closed_by_server(sock, 0.01), "served only after the trickler was cut"
        (result,) = run_apache_client(apache_python, limited_server.port, "kernel:cpu:add")
        assert result["mean_s"] > 0
        assert is_closed_by_server(sock, HANDSHAKE_S + 5)
        assert len(sent) < len(hello), "the trickler finished its handshake before the deadline"
    finally:
        stop.set()
        sock.close()
    assert limited_server.logged("deadline passed"), limited_server.log()


def test_three_stalled_handshakes_delay_nobody(apache_python, limited_server):  # noqa: F811
    from tvm.rpc import base

    stalled = [
        stalled_connection(limited_server.port),  # connects and says nothing
        stalled_connection(limited_server.port, struct.pack("<i", base.RPC_MAGIC)),  # magic, no key
        stalled_connection(limited_server.port, struct.pack("<ii", base.RPC_MAGIC, 7) + b"cli"),
    ]
    try:
        assert served(limited_server.port)
        assert not any(is_closed_by_server(s, 0.01) for s in stalled), "served after the stalled ones"
        (result,) = run_apache_client(apache_python, limited_server.port, "kernel:cpu:add")
        assert result["mean_s"] > 0
        assert all(is_closed_by_server(s, HANDSHAKE_S + 5) for s in stalled)
    finally:
        for s in stalled:
            s.close()


def test_idle_session_blocks_nobody_and_ends_at_the_idle_timeout(apache_python, limited_server):  # noqa: F811
    idle = raw_session(limited_server.port)
    try:
        assert served(limited_server.port)  # while `idle` holds its session
        assert not is_closed_by_server(idle, 0.01)
        # the session sends why it ends, then closes
        tail = closed_by_server_within(idle, IDLE_S + 5)
        assert b"RPCSessionTimeoutError" in tail and b"sent nothing for 2s" in tail, tail
    finally:
        idle.close()
    # apache-tvm's client that idles past the timeout gets the error at its next call
    (result,) = run_apache_client(apache_python, limited_server.port, "idle", idle_s=IDLE_S + 1)
    assert result["error"] == "RPCSessionTimeoutError", result
    assert "idle timeout" in result["message"]


def closed_by_server_within(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    return closed_by_server(sock)


def test_session_limit_refuses_with_a_message_apache_client_shows(apache_python, limited_server):  # noqa: F811
    before = finished_sessions(limited_server)
    held = [raw_session(limited_server.port) for _ in range(2)]  # --max-sessions 2
    stop = threading.Event()

    def keep_busy() -> None:  # calls, so the idle timeout does not end the held sessions
        while not stop.wait(0.5):
            for s in held:
                call(s, "runtime.GetDeviceAttr", 1, 0, 0)

    pinger = threading.Thread(target=keep_busy, daemon=True)
    pinger.start()
    try:
        (refused,) = run_apache_client(apache_python, limited_server.port, "refused")
        assert refused["error"] == "RPCError", refused
        assert "the RPC server is busy" in refused["message"]
        assert "--max-sessions 2" in refused["message"]
    finally:
        stop.set()
        pinger.join()
        for s in held:
            s.close()
    wait_until(lambda: finished_sessions(limited_server) >= before + 2, 30, "the held sessions to end")
    (result,) = run_apache_client(apache_python, limited_server.port, "kernel:cpu:add")
    assert result["mean_s"] > 0


# ------------------------------------------------------------------ what a session may do


def attempts(apache_python: str, port: int, nbytes: int = 1000) -> dict[str, str]:  # noqa: F811
    (result,) = run_apache_client(apache_python, port, "attempts", nbytes=nbytes)
    assert result["mean_s"] > 0  # uploading and running its own artifact always works
    return result["attempts"]


def test_default_server_allows_what_apache_tvm_allows(apache_python, our_server):  # noqa: F811
    assert attempts(apache_python, our_server.port) == {
        "load_absolute_path": "ok",
        "load_own_upload_by_loader": "ok",
        "time_a_global_by_name": "ok",
        "upload_nbytes": "ok",
    }


def test_measure_only_preset(apache_python, tmp_path):  # noqa: F811
    server = start_our_server(tmp_path, "--allow", "measure-only", "--max-upload-bytes", "200000")
    try:
        # what tuners and benchmarks do still works: kernels, copies, time_evaluator, Relax VM
        steps = ["kernel:cpu:matmul", "copies:cpu", "vm:cpu:mlp"]
        assert [r["step"] for r in run_apache_client(apache_python, server.port, *steps)] == steps
        result = attempts(apache_python, server.port, nbytes=300000)
    finally:
        server.stop()
    for name in ("load_absolute_path", "load_own_upload_by_loader"):
        assert "does not let a session call the global function 'ffi.ModuleLoadFromFile'" in result[name]
    assert "'ffi.ModuleLoadFromFile'" in result["time_a_global_by_name"]
    assert "refused" in result["time_a_global_by_name"]
    assert "over the server's limit of 200000 (--max-upload-bytes)" in result["upload_nbytes"]
    assert "preset measure-only" in server.log()


def test_confine_loads(apache_python, tmp_path):  # noqa: F811
    server = start_our_server(tmp_path, "--confine-loads")
    try:
        result = attempts(apache_python, server.port)
    finally:
        server.stop()
    assert "is outside the RPC session's working directory" in result["load_absolute_path"]
    assert result["load_own_upload_by_loader"] == "ok"
    assert "cannot call 'ffi.ModuleLoadFromFile' by name" in result["time_a_global_by_name"]
    assert result["upload_nbytes"] == "ok"


# ------------------------------------------------------------------ authentication and TLS


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rpc-secret") / "secret"
    path.write_text(SECRET + "\n")
    return path


def test_shared_secret_with_apache_client(apache_python, tmp_path, secret_file):  # noqa: F811
    server = start_our_server(tmp_path, "--auth-secret-file", str(secret_file))
    try:
        port = server.port
        # the secret as a key option, or as session constructor arguments
        ok = run_apache_client(apache_python, port, "kernel:cpu:add", key=f"-auth={SECRET}")
        ctor = json.dumps(["tvm.rpc.auth", SECRET])
        ok += run_apache_client(apache_python, port, "kernel:cpu:add", constructor_args=ctor)
        assert all(r["mean_s"] > 0 for r in ok)
        (wrong,) = run_apache_client(apache_python, port, "refused", key="-auth=guess")
        (none,) = run_apache_client(apache_python, port, "refused")
        # ours, through its auth= argument
        with tvm.rpc.connect("127.0.0.1", port, auth=SECRET) as sess:
            assert sess.cpu(0).exist
    finally:
        server.stop()
    assert "authentication failed" in wrong["message"] and "the one given is wrong" in wrong["message"]
    assert "authentication failed" in none["message"] and "none was given" in none["message"]
    assert SECRET not in server.log()


def test_shared_secret_through_apache_tracker(apache_python, tmp_path, secret_file):  # noqa: F811
    from test_rpc_tracker_client import start_apache_tracker

    tracker = start_apache_tracker(apache_python, tmp_path)
    server = None
    try:
        server = start_our_server(
            tmp_path,
            "--tracker",
            f"127.0.0.1:{tracker.port}",
            "--key",
            "locked",
            "--auth-secret-file",
            str(secret_file),
        )
        ctor = json.dumps(["tvm.rpc.auth", SECRET])
        (result,) = run_apache_client(
            apache_python, 0, "tracker", tracker_port=tracker.port, key="locked", constructor_args=ctor
        )
        assert result["mean_s"] > 0
    finally:
        if server is not None:
            server.stop()
        tracker.stop()


def test_tls_for_our_client_and_a_clear_refusal_for_apache(apache_python, tmp_path):  # noqa: F811
    cert, key = TLS_DIR / "server.pem", TLS_DIR / "server.key"
    server = start_our_server(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        context = ssl.create_default_context(cafile=str(cert))
        with tvm.rpc.connect("127.0.0.1", server.port, tls=context) as sess:
            sess.upload(str(ARTIFACTS / "cpu" / "add.so"))
            mod = sess.load_module("add.so")
            dev = sess.cpu(0)
            a = dev.tensor(np.arange(1024, dtype="float32"))
            c = dev.empty((1024,), "float32")
            mod["add"](a, a, c)
            np.testing.assert_array_equal(c.numpy(), 2 * np.arange(1024, dtype="float32"))
        # a client that does not trust the certificate does not get in
        with pytest.raises(ssl.SSLError):
            tvm.rpc.connect("127.0.0.1", server.port, tls=True)
        (refused,) = run_apache_client(apache_python, server.port, "refused")
    finally:
        server.stop()
    assert "accepts TLS connections only" in refused["message"]


def test_exposure_warning():
    from tvm.rpc._policy import SessionPolicy
    from tvm.rpc.server import RPCServer

    def warning(host: str, **options) -> str | None:
        server = RPCServer(host, port=0, port_end=1, **options)
        try:
            return server.exposure_warning()
        finally:
            server.terminate()

    assert "without authentication or restrictions" in warning("0.0.0.0")
    assert warning("127.0.0.1") is None
    assert warning("0.0.0.0", auth_secret=SECRET) is None
    assert warning("0.0.0.0", policy=SessionPolicy.from_options("measure-only")) is None
