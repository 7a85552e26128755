"""The native RPC session (src/core/rpc: remote calls, copies and FREE_HANDLE in C++, and for a
plain socket the whole read-answer-write loop) answers exactly what the Python loop answers (the
one TLS sessions keep), keeps the error kinds of the session's Python functions, and ends a
session on a malformed packet with a clear error instead of crashing.

The sessions run in this process on a socketpair, driven with raw protocol bytes
(tvm.rpc._protocol), so each reply can be compared byte for byte."""

from __future__ import annotations

import socket
import struct
import threading

import numpy as np
import pytest

import tvm  # noqa: F401 - loads the core DSO (the tvm_runtime.rpc.* globals)

ECHO = "testing.rpc_native_echo"
DENY = "testing.rpc_native_deny"


@pytest.fixture(scope="module", autouse=True)
def python_globals():
    import tvm_ffi

    def deny(*_args):
        raise PermissionError("this session may not do that")

    tvm_ffi.register_global_func(ECHO, lambda *args: args[0], override=True)
    tvm_ffi.register_global_func(DENY, deny, override=True)


class Peer:
    """A ServerSession served from a thread, and the client end of its socketpair."""

    def __init__(self, tmp_path, native: bool, **options) -> None:
        from tvm.rpc._session import ServerSession
        from tvm.rpc._workspace import Workspace

        tmp_path.mkdir(parents=True, exist_ok=True)
        server_end, self.sock = socket.socketpair()
        if not native:
            server_end.settimeout(60)  # not a blocking socket: the session keeps the Python loop
        self.session = ServerSession(server_end, Workspace(str(tmp_path)), initialized=True, **options)
        assert self.session._native_loop_possible() == native
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.sock.settimeout(30)

    def _serve(self) -> None:
        try:
            self.session.serve()
        except BaseException as err:  # noqa: BLE001 - the test reads it
            self.error = err

    def send(self, writer) -> None:
        self.sock.sendall(b"".join(bytes(p) for p in writer.packet()))

    def reply(self) -> bytes:
        """One whole reply packet (length prefix included)."""
        head = self._exactly(8)
        return head + self._exactly(struct.unpack("<Q", head)[0])

    def _exactly(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            assert chunk, "the session closed the connection"
            out += chunk
        return out

    def ended(self) -> BaseException | None:
        """The session's end once the client is gone: None (normal) or what it raised."""
        self.sock.close()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the session did not end"
        return self.error


def script():
    """(description, packet) pairs touching every native handler and value type; later packets
    use the handles the server hands out, which are deterministic (0x1000, 0x1010, ...)."""
    from tvm.rpc._protocol import Code, DataType, Device, DLTensorMeta, Opaque, Writer

    def packet(code, *fields):
        w = Writer(code)
        for kind, value in fields:
            getattr(w, kind)(value)
        return w

    def get(name):
        return packet(Code.GET_GLOBAL_FUNC, ("packed_seq", [name]))

    def call(handle, *args):
        return packet(Code.CALL_FUNC, ("u64", handle), ("packed_seq", list(args)))

    x = np.arange(16, dtype="float32")
    meta = DLTensorMeta(0x1030, 1, 0, (2, 32, 1), (16,))
    view = DLTensorMeta(0x1030, 1, 0, (2, 32, 1), (2, 4), 16)
    copy_in = packet(Code.COPY_TO_REMOTE, ("dltensor", meta), ("u64", x.nbytes), ("raw", x.tobytes()))
    return [
        ("get echo (0x1000)", get(ECHO)),
        ("get GetDeviceAttr (0x1010)", get("runtime.GetDeviceAttr")),
        ("get deny (0x1020)", get(DENY)),
        ("int result", call(0x1010, 1, 0, 0)),
        ("echo int", call(0x1000, -7)),
        ("echo float", call(0x1000, 2.5)),
        ("echo bool", call(0x1000, True)),
        ("echo None", call(0x1000, None)),
        ("echo str", call(0x1000, "héllo")),
        ("echo bytes", call(0x1000, b"\x00\x01binary")),
        ("echo device", call(0x1000, Device((1, 0)))),
        ("echo dtype", call(0x1000, DataType((2, 32, 1)))),
        ("echo opaque", call(0x1000, Opaque(0x1234))),
        ("alloc 64 bytes (0x1030)", packet(Code.DEV_ALLOC_DATA, ("packed_seq", [Device((1, 0)), 64]))),
        ("copy in", copy_in),
        ("copy out", packet(Code.COPY_FROM_REMOTE, ("dltensor", meta), ("u64", x.nbytes))),
        ("echo tensor (0x1040 data, 0x1050 object)", call(0x1000, meta)),
        (
            "echo a view (0x1060 data, 0x1070 object)",
            call(0x1000, view),
        ),
        ("echo function handle (0x1080)", call(0x1000, _handle(0x1010, 68))),
        ("call the returned function", call(0x1080, 1, 0, 0)),
        ("free the returned tensor", packet(Code.FREE_HANDLE, ("packed_seq", [Opaque(0x1050)]))),
        ("its data is gone", packet(Code.COPY_FROM_REMOTE, ("dltensor", _meta_of(0x1040)), ("u64", 4))),
        ("free an unknown handle", packet(Code.FREE_HANDLE, ("packed_seq", [Opaque(0xBAD0)]))),
        ("unknown function handle", call(0xBAD0)),
        ("a handle that is not a function", call(0x1070)),
        ("unknown object handle argument", call(0x1000, _handle(0xBAD0, 73))),
        ("unknown data handle argument", call(0x1000, _meta_of(0xBAD0))),
        ("a view past the end", call(0x1000, DLTensorMeta(0x1030, 1, 0, (2, 32, 1), (64,)))),
        ("wrong argument count", call(0x1010, 1)),
        ("a failing Python global", call(0x1020)),
        ("copy beyond the tensor", packet(Code.COPY_FROM_REMOTE, ("dltensor", meta), ("u64", 1 << 20))),
    ]


def _handle(value: int, type_index: int):
    from tvm.rpc._protocol import Handle

    return Handle(value, type_index)


def _meta_of(data: int):
    from tvm.rpc._protocol import DLTensorMeta

    return DLTensorMeta(data, 1, 0, (2, 32, 1), (1,))


def replies(tmp_path, native: bool) -> list[bytes]:
    peer = Peer(tmp_path, native)
    out = []
    for _what, packet in script():
        peer.send(packet)
        out.append(peer.reply())
    assert peer.ended() is None
    return out


def test_native_loop_answers_byte_for_byte_like_the_python_loop(tmp_path):
    from tvm.rpc._protocol import Code, Reader

    native = replies(tmp_path / "native", native=True)
    python = replies(tmp_path / "python", native=False)
    steps = [what for what, _ in script()]
    for what, a, b in zip(steps, native, python):
        assert a == b, what
    decoded = {}
    for what, raw in zip(steps, native):
        reader = Reader(raw[8:])
        code = reader.i32()
        decoded[what] = (code, reader.packed_seq() if code != Code.COPY_ACK else bytes(reader.view(64)))
    assert decoded["int result"] == (Code.RETURN, [1, 1])
    assert decoded["echo float"] == (Code.RETURN, [3, 2.5])
    assert decoded["echo str"][1] == [65, "héllo"]
    assert decoded["echo bytes"][1] == [66, b"\x00\x01binary"]
    assert decoded["copy out"] == (Code.COPY_ACK, np.arange(16, dtype="float32").tobytes())
    assert decoded["echo tensor (0x1040 data, 0x1050 object)"][1][0] == 70
    assert decoded["call the returned function"] == (Code.RETURN, [1, 1])
    code, (message,) = decoded["its data is gone"]
    assert code == Code.EXCEPTION and "unknown remote data handle 0x1040" in message
    assert decoded["free an unknown handle"] == (Code.RETURN, [None])
    assert "unknown remote function handle 0xbad0" in decoded["unknown function handle"][1][0]
    assert decoded["a handle that is not a function"][1] == [
        "TypeError: remote handle 0x1070 is not a function"
    ]
    assert "unknown remote object handle 0xbad0" in decoded["unknown object handle argument"][1][0]
    assert "unknown remote data handle 0xbad0" in decoded["unknown data handle argument"][1][0]
    assert decoded["a view past the end"][0] == Code.EXCEPTION
    assert decoded["wrong argument count"][0] == Code.EXCEPTION
    code, (message,) = decoded["a failing Python global"]
    assert code == Code.EXCEPTION and message.endswith("Error: this session may not do that")
    assert decoded["copy beyond the tensor"][0] == Code.EXCEPTION


def malformed_packets():
    """(what, body) of packets that break the protocol inside what the native session reads."""
    from tvm.rpc._protocol import Code, Writer

    def body(code, *fields):
        w = Writer(code)
        for kind, value in fields:
            getattr(w, kind)(value)
        return b"".join(bytes(p) for p in w.parts)

    tensor_head = struct.pack("<QiiiBBH", 0x1000, 1, 0, 65, 2, 32, 1)
    return [
        ("ndim 65", body(Code.CALL_FUNC, ("u64", 0x1000), ("i32", 1), ("i32", 7), ("raw", tensor_head))),
        (
            "negative dimension",
            body(
                Code.CALL_FUNC,
                ("u64", 0x1000),
                ("i32", 1),
                ("i32", 7),
                ("raw", struct.pack("<QiiiBBHqQ", 0x1000, 1, 0, 1, 2, 32, 1, -4, 0)),
            ),
        ),
        ("object type 99", body(Code.CALL_FUNC, ("u64", 0), ("i32", 1), ("i32", 64), ("u32", 99))),
        ("count past the packet", body(Code.CALL_FUNC, ("u64", 0), ("i32", 1 << 30))),
        ("negative count", body(Code.CALL_FUNC, ("u64", 0), ("i32", -1))),
        ("bytes past the packet", body(Code.CALL_FUNC, ("u64", 0), ("i32", 1), ("i32", 9), ("u64", 1 << 62))),
        ("handle cut short", body(Code.CALL_FUNC, ("raw", b"\x00\x10"))),
        ("free without a sequence", body(Code.FREE_HANDLE)),
        (
            "copy in past the packet",
            body(
                Code.COPY_TO_REMOTE,
                ("raw", struct.pack("<QiiiBBHqQ", 0x1000, 1, 0, 1, 2, 8, 1, 8, 0)),
                ("u64", 1000),
                ("raw", b"1234"),
            ),
        ),
        (
            "copy out over the packet limit",
            body(
                Code.COPY_FROM_REMOTE,
                ("raw", struct.pack("<QiiiBBHqQ", 0x1000, 1, 0, 1, 2, 8, 1, 8, 0)),
                ("u64", 1 << 40),
            ),
        ),
        ("unknown code", body(4242)),
    ]


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_malformed_packets_end_the_session_with_a_protocol_error(tmp_path, native):
    from tvm.rpc._protocol import ProtocolError

    for what, body in malformed_packets():
        peer = Peer(tmp_path, native, max_packet_bytes=1 << 20)
        peer.sock.sendall(struct.pack("<Q", len(body)) + body)
        peer.thread.join(30)
        assert isinstance(peer.error, ProtocolError), (what, peer.error)
        peer.ended()


def test_packet_limits_and_empty_packets_natively(tmp_path):
    from tvm.rpc._protocol import ProtocolError

    peer = Peer(tmp_path, True, max_packet_bytes=1 << 16)
    peer.sock.sendall(struct.pack("<Q", 0) * 3)  # empty packets are skipped
    peer.sock.sendall(struct.pack("<Q", (1 << 16) + 1))
    peer.thread.join(30)
    assert isinstance(peer.error, ProtocolError) and "exceeds the server limit of 65536" in str(peer.error)
    peer.ended()
    peer = Peer(tmp_path, True)
    peer.sock.sendall(struct.pack("<Q", 2) + b"\x03\x00")
    peer.thread.join(30)
    assert "has no room for its code" in str(peer.error)
    peer.ended()
    peer = Peer(tmp_path, True)
    peer.sock.sendall(struct.pack("<Q", 100) + b"\x03\x00\x00\x00")  # then the client leaves
    assert "connection closed in the middle of a packet (4/100 bytes)" in str(peer.ended())


def test_idle_timeout_natively(tmp_path):
    from tvm.rpc._session import SessionIdleError

    peer = Peer(tmp_path, True, idle_timeout=0.2)
    peer.thread.join(30)
    assert isinstance(peer.error, SessionIdleError)
    assert "the client sent nothing for 0.2s" in str(peer.error)
    peer.ended()
    peer = Peer(tmp_path, True, idle_timeout=0.2)
    peer.sock.sendall(struct.pack("<Q", 100))
    peer.thread.join(30)
    assert "stopped in the middle of a packet" in str(peer.error)
    peer.ended()


def test_session_functions_keep_the_policy(tmp_path):
    """What the allow-list refuses is refused before a handle exists, so no native call can
    reach it; what it allows runs natively."""
    from tvm.rpc._policy import SessionPolicy
    from tvm.rpc._protocol import Code, Opaque, Reader, Writer

    peer = Peer(tmp_path, True, policy=SessionPolicy.from_options("measure-only"))
    for name, allowed in ((ECHO, False), ("ffi.ModuleLoadFromFile", False), ("ffi.ArraySize", True)):
        w = Writer(Code.GET_GLOBAL_FUNC)
        w.packed_seq([name])
        peer.send(w)
        reader = Reader(peer.reply()[8:])
        code, values = reader.i32(), reader.packed_seq()
        if allowed:
            assert code == Code.RETURN and values[0], name
        else:
            assert code == Code.EXCEPTION and "does not let a session call the global function" in values[0]
    # the refused lookups issued no handle: 0x1000 is ffi.ArraySize's, 0x1010 names nothing
    for handle, message in ((0x1000, "ArraySize"), (0x1010, "unknown remote function handle 0x1010")):
        w = Writer(Code.CALL_FUNC)
        w.u64(handle)
        w.packed_seq([])
        peer.send(w)
        reader = Reader(peer.reply()[8:])
        code, (text,) = reader.i32(), reader.packed_seq()
        assert code == Code.EXCEPTION and message in text, text
    # the time evaluator applies the allow-list to a global it is asked to time by name; its
    # PermissionError reaches the client as such through the native call path
    w = Writer(Code.GET_GLOBAL_FUNC)
    w.packed_seq(["runtime.RPCTimeEvaluator"])
    peer.send(w)
    reader = Reader(peer.reply()[8:])
    assert reader.i32() == Code.RETURN and reader.packed_seq() == [Opaque(0x1010)]
    w = Writer(Code.CALL_FUNC)
    w.u64(0x1010)
    w.packed_seq([None, "ffi.ModuleLoadFromFile", 1, 0, 1, 1, 0, 0, 0, 0, 0, ""])
    peer.send(w)
    reader = Reader(peer.reply()[8:])
    code, (text,) = reader.i32(), reader.packed_seq()
    assert code == Code.EXCEPTION
    assert text.startswith("PermissionError: this RPC server does not let a session call the global function")
    assert "'ffi.ModuleLoadFromFile'" in text
    assert peer.ended() is None


def test_registry_functions_are_called_without_python_in_between(tmp_path):
    """A global function from the registry is kept as is (its calls stay native); only the
    session's own Python functions get the wrapper that keeps their error kinds."""
    import tvm_ffi

    from tvm.rpc._protocol import Code, Opaque, Reader, Writer

    peer = Peer(tmp_path, True)
    for name in ("runtime.GetDeviceAttr", "tvm.rpc.server.upload"):
        w = Writer(Code.GET_GLOBAL_FUNC)
        w.packed_seq([name])
        peer.send(w)
        reader = Reader(peer.reply()[8:])
        assert reader.i32() == Code.RETURN
    get = peer.session._native["get"]
    native = tvm_ffi.get_global_func("runtime.GetDeviceAttr")
    assert get(peer.session.state, 0x1000).same_as(native)
    assert not get(peer.session.state, 0x1010).same_as(native)
    assert reader.packed_seq() == [Opaque(0x1010)]
    assert peer.ended() is None
