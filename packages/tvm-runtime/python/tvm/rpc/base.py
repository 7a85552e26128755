"""Socket-level pieces shared by the RPC server, client and tracker: magic numbers, the
handshake and the length-prefixed JSON messages the tracker speaks (apache-tvm 0.27 format)."""

from __future__ import annotations

import errno
import json
import random
import socket
import struct
import time
from typing import Any

RPC_MAGIC = 0xFF271
RPC_TRACKER_MAGIC = 0x2F271
RPC_CODE_SUCCESS = RPC_MAGIC + 0
RPC_CODE_DUPLICATE = RPC_MAGIC + 1
RPC_CODE_MISMATCH = RPC_MAGIC + 2
# Added to a device type to name a device of an RPC session (apache-tvm's encoding).
RPC_SESS_MASK = 128

# Session constructor that carries a server's shared secret (``session_constructor_args=
# [AUTH_CONSTRUCTOR, secret]``): the one channel apache-tvm's unmodified client offers through a
# tracker too (docs/rpc.md).
AUTH_CONSTRUCTOR = "tvm.rpc.auth"

# A handshake key longer than this is not a TVM client.
MAX_KEY_BYTES = 4096
# Tracker messages are small JSON lists.
MAX_JSON_BYTES = 1 << 20


class TrackerCode:
    """Request codes of the tracker protocol."""

    FAIL = -1
    SUCCESS = 0
    PING = 1
    STOP = 2
    PUT = 3
    REQUEST = 4
    UPDATE_INFO = 5
    SUMMARY = 6
    GET_PENDING_MATCHKEYS = 7


def recvall(sock: socket.socket, nbytes: int, deadline: float | None = None) -> bytes:
    """Exactly ``nbytes`` from ``sock``; a closed connection is an OSError.

    With ``deadline`` (a ``time.monotonic()`` value), all of them must arrive before it: a peer
    trickling one byte at a time cannot stretch the wait (TimeoutError).
    """
    buf = bytearray(nbytes)
    view = memoryview(buf)
    got = 0
    while got < nbytes:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"deadline passed after {got} of {nbytes} bytes")
            sock.settimeout(left)
        try:
            n = sock.recv_into(view[got:], nbytes - got)
        except socket.timeout:
            raise TimeoutError(f"deadline passed after {got} of {nbytes} bytes") from None
        if n == 0:
            raise ConnectionResetError(f"connection closed after {got} of {nbytes} bytes")
        got += n
    return bytes(buf)


def recv_i32(sock: socket.socket, deadline: float | None = None) -> int:
    return struct.unpack("<i", recvall(sock, 4, deadline))[0]


def send_i32(sock: socket.socket, value: int) -> None:
    sock.sendall(struct.pack("<i", value))


def send_key(sock: socket.socket, key: str) -> None:
    data = key.encode("utf-8")
    sock.sendall(struct.pack("<i", len(data)) + data)


def recv_key(sock: socket.socket, deadline: float | None = None) -> str:
    n = recv_i32(sock, deadline)
    if not 0 <= n <= MAX_KEY_BYTES:
        raise ValueError(f"handshake key length {n} is out of range")
    return recvall(sock, n, deadline).decode("utf-8", errors="replace")


def sendjson(sock: socket.socket, data: Any) -> None:
    payload = json.dumps(data).encode("utf-8")
    sock.sendall(struct.pack("<i", len(payload)) + payload)


def recvjson(sock: socket.socket) -> Any:
    size = recv_i32(sock)
    if not 0 <= size <= MAX_JSON_BYTES:
        raise ValueError(f"tracker message length {size} is out of range")
    return json.loads(recvall(sock, size).decode("utf-8"))


def random_key(prefix: str, delimiter: str = ":", cmap: Any = None) -> str:
    """``prefix<delimiter><random>``, avoiding keys in ``cmap``."""
    while True:
        key = f"{prefix}{delimiter}{random.random()}"
        if not cmap or key not in cmap:
            return key


def split_random_key(key: str, delimiter: str = ":") -> list[str]:
    return key.rsplit(delimiter, 1)


def get_addr_family(addr: tuple[str, int]) -> int:
    """The socket family (AF_INET / AF_INET6) ``addr`` resolves to."""
    return socket.getaddrinfo(addr[0], addr[1], 0, 0, socket.IPPROTO_TCP)[0][0]


def connect_with_retry(addr: tuple[str, int], timeout: float = 60, retry_period: float = 1) -> socket.socket:
    """Connect to ``addr``, retrying refused connections until ``timeout`` seconds pass."""
    start = time.monotonic()
    while True:
        try:
            return socket.create_connection(addr, timeout=timeout)
        except ConnectionRefusedError:
            if time.monotonic() - start > timeout:
                raise ConnectionRefusedError(f"cannot connect to {addr[0]}:{addr[1]}") from None
            time.sleep(retry_period)


def bind_in_range(host: str, port: int, port_end: int, backlog: int, what: str) -> socket.socket:
    """A listening socket on the first free port of [port, port_end) (``port`` alone when the
    range is empty; port 0 lets the OS choose).  Raises ValueError naming ``what`` if none is."""
    family = socket.getaddrinfo(host, port, 0, 0, socket.IPPROTO_TCP)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for candidate in range(port, max(port_end, port + 1)):
        try:
            sock.bind((host, candidate))
        except OSError as err:
            if err.errno in (errno.EADDRINUSE, errno.EACCES):
                continue
            sock.close()
            raise
        sock.listen(backlog)
        return sock
    sock.close()
    raise ValueError(f"cannot bind {what} to any port in [{port}, {port_end})")
