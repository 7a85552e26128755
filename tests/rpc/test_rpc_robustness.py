"""Our RPC server survives bad clients: each session is isolated, and a malformed packet, an
oversized length field or a client vanishing mid-call ends only that session (with a logged
error) while the server keeps serving.  Raw protocol bytes come from tvm.rpc._protocol."""

from __future__ import annotations

import random
import socket
import struct
import subprocess
import time

from rpc_support import (  # noqa: F401
    CLIENT_SCRIPT,
    apache_python,
    call,
    closed_by_server,
    our_server,
    raw_session,
    recv,
    run_apache_client,
    send,
)

from conftest import ARTIFACTS


def assert_still_serving(port: int) -> None:
    from tvm.rpc._protocol import Code

    sock = raw_session(port)
    code, values = call(sock, "runtime.GetDeviceAttr", 1, 0, 0)  # cpu exists
    assert (code, values) == (Code.RETURN, [1, 1])
    sock.close()


def test_oversized_length_field_ends_only_that_session(our_server):  # noqa: F811
    sock = raw_session(our_server.port)
    sock.sendall(struct.pack("<Q", 1 << 62) + b"\x03\x00\x00\x00")
    tail = closed_by_server(sock)
    assert b"exceeds the server limit" in tail  # told why, as an RPC exception packet
    assert_still_serving(our_server.port)
    assert our_server.logged("protocol error: packet length"), our_server.log()


def test_malformed_packets_end_only_that_session(our_server):  # noqa: F811
    from tvm.rpc._protocol import Code, Writer

    bad_packets = []
    w = Writer(Code.CALL_FUNC)  # an argument with an unknown type index
    w.u64(0x1000)
    w.i32(1)
    w.i32(99)
    bad_packets.append(w)
    w = Writer(Code.CALL_FUNC)  # a string whose length runs past the packet
    w.u64(0x1000)
    w.i32(1)
    w.i32(8)
    w.u64(1 << 40)
    bad_packets.append(w)
    w = Writer(Code.COPY_TO_REMOTE)  # truncated DLTensor
    w.u64(0)
    bad_packets.append(w)
    bad_packets.append(Writer(12345))  # unknown code
    for packet in bad_packets:
        sock = raw_session(our_server.port)
        send(sock, packet)
        assert b"RPCProtocolError" in closed_by_server(sock)
        sock.close()
    assert_still_serving(our_server.port)
    assert our_server.logged("protocol error", times=len(bad_packets)), our_server.log()


def test_bad_handles_are_errors_not_crashes(our_server):  # noqa: F811
    from tvm.rpc._protocol import Code, DLTensorMeta, Writer

    sock = raw_session(our_server.port)
    w = Writer(Code.CALL_FUNC)
    w.u64(0xDEAD0)
    w.packed_seq([])
    send(sock, w)
    code, (msg,) = recv(sock)
    assert code == Code.EXCEPTION and "unknown remote function handle" in msg
    # a tensor whose data handle was never issued: an error, not a wild pointer
    w = Writer(Code.COPY_FROM_REMOTE)
    w.dltensor(DLTensorMeta(0x7FFF0000, 1, 0, (2, 32, 1), (4,)))
    w.u64(16)
    send(sock, w)
    code, (msg,) = recv(sock)
    assert code == Code.EXCEPTION and "unknown remote data handle" in msg
    # the session goes on
    assert call(sock, "runtime.GetDeviceAttr", 1, 0, 0) == (Code.RETURN, [1, 1])
    sock.close()


def test_disconnect_mid_packet_and_bad_handshakes(our_server):  # noqa: F811
    from tvm.rpc import base

    sock = raw_session(our_server.port)
    sock.sendall(struct.pack("<Q", 1000) + b"\x03\x00\x00\x00" + b"x" * 10)
    sock.close()
    for hello in (b"GET / HTTP/1.0\r\n\r\n", struct.pack("<ii", base.RPC_MAGIC, 1 << 30), b""):
        s = socket.create_connection(("127.0.0.1", our_server.port), timeout=10)
        s.sendall(hello)
        s.close()
    s = socket.create_connection(("127.0.0.1", our_server.port), timeout=10)
    base.send_i32(s, base.RPC_MAGIC)
    base.send_key(s, "client:some-other-key")
    assert base.recv_i32(s) == base.RPC_CODE_MISMATCH
    s.close()
    assert_still_serving(our_server.port)
    assert our_server.logged("connection closed in the middle of a packet"), our_server.log()


def test_random_garbage_stress(our_server):  # noqa: F811
    """Bounded fuzz on loopback: 30 sessions of seeded random bytes after a valid handshake."""
    rng = random.Random(1234)
    start = time.monotonic()
    for i in range(30):
        sock = raw_session(our_server.port)
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(4, 64)))
        if i % 3 == 0:  # a plausible length with random contents
            payload = struct.pack("<Q", len(body)) + body
        else:  # random bytes including the length field
            payload = body
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            closed_by_server(sock)
        except OSError:
            pass
        sock.close()
    assert time.monotonic() - start < 60
    assert_still_serving(our_server.port)
    assert our_server.alive()


def test_client_killed_mid_call_then_next_client_served(apache_python, our_server):  # noqa: F811
    # apache-tvm's client starts a 30 s remote timing run and is killed one second in
    argv = [apache_python, str(CLIENT_SCRIPT), "timeout", "--port", str(our_server.port)]
    proc = subprocess.Popen(
        [*argv, "--artifacts", str(ARTIFACTS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    seen = our_server.log().count("load_module add.so")
    while our_server.log().count("load_module add.so") == seen:
        assert time.monotonic() < deadline, our_server.log()
        time.sleep(0.05)
    time.sleep(1.0)
    proc.kill()
    proc.communicate(timeout=30)
    start = time.monotonic()
    (result,) = run_apache_client(apache_python, our_server.port, "kernel:cpu:add")
    assert result["mean_s"] > 0
    # the abandoned 30 s timing run was cut short, not waited out
    assert time.monotonic() - start < 15
    assert our_server.logged("client disconnected in the middle of a call"), our_server.log()


def test_sessions_are_isolated(apache_python, our_server):  # noqa: F811
    from tvm.rpc._protocol import Code

    a = raw_session(our_server.port)
    assert call(a, "tvm.rpc.server.upload", "secret.bin", b"12345")[0] == Code.RETURN
    code, (_, listing) = call(a, "tvm.rpc.server.listdir", ".")
    assert listing == "secret.bin"
    code, (msg,) = call(a, "tvm.rpc.server.upload", "../escape.bin", b"x")
    assert code == Code.EXCEPTION and "outside the RPC session" in msg
    a.close()
    b = raw_session(our_server.port)
    code, (_, listing) = call(b, "tvm.rpc.server.listdir", ".")
    assert listing == ""  # a fresh directory: the first session's upload is not there
    b.close()
    deadline = time.monotonic() + 10
    while list(our_server.work_dir.iterdir()):  # every session directory is removed at its end
        assert time.monotonic() < deadline, list(our_server.work_dir.iterdir())
        time.sleep(0.05)
