"""The RPC tracker: servers announce themselves under a device key, clients request a device by
key and get the address of a free server.  Speaks apache-tvm 0.27's tracker protocol (a magic
number, then length-prefixed JSON lists), so apache-tvm servers and clients can use it too.

One thread per connection keeps it dependency-free (apache-tvm's needs tornado); a farm has
tens of devices, not thousands.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import socket
import threading
from typing import Any

from . import base
from ._listener import Listener
from .base import RPC_TRACKER_MAGIC, TrackerCode  # noqa: F401  (apache-tvm's names here)

# The largest tracker message accepted (apache-tvm 0.27's name for it).
MAX_TRACKER_MSG_BYTES = base.MAX_JSON_BYTES

logger = logging.getLogger("tvm.rpc.tracker")


class _Conn:
    """One peer of the tracker: a server announcing itself or a client asking for one."""

    def __init__(self, sock: socket.socket, addr: Any) -> None:
        self.sock = sock
        self.addr = addr
        self.info: dict[str, Any] = {}
        self.pending_matchkeys: set[str] = set()
        self.put_values: list[tuple[Any, ...]] = []
        self.send_lock = threading.Lock()
        self.open = True

    def send(self, value: Any) -> bool:
        with self.send_lock:
            if not self.open:
                return False
            try:
                base.sendjson(self.sock, value)
                return True
            except OSError:
                return False


class _Queue:
    """Free servers of one key, and the requests waiting for one (highest priority first)."""

    def __init__(self) -> None:
        self.values: list[tuple[Any, ...]] = []  # (conn, host, port, matchkey)
        self.requests: list[tuple[int, int, _Conn]] = []
        self._order = itertools.count()

    def schedule(self) -> None:
        while self.values and self.requests:
            value = self.values.pop(0)
            _, _, requester = heapq.heappop(self.requests)
            owner, host, port, matchkey = value
            if requester.send([TrackerCode.SUCCESS, [host, port, matchkey]]):
                owner.pending_matchkeys.discard(matchkey)
            else:
                self.values.insert(0, value)

    def request(self, requester: _Conn, priority: int) -> None:
        heapq.heappush(self.requests, (-priority, next(self._order), requester))


class Tracker(Listener):
    """Serve the tracker protocol on ``host:[port, port_end)`` (``start()`` runs it in a thread)."""

    def __init__(
        self, host: str = "0.0.0.0", port: int = 9190, port_end: int = 9199, stop_key: str = ""
    ) -> None:
        super().__init__(host, port, port_end, what="the tracker", thread_name="tvm-rpc-tracker")
        self.stop_key = stop_key
        self._queues: dict[str, _Queue] = {}
        self._conns: set[_Conn] = set()
        logger.info("tracker bound to %s:%d", host, self.port)

    # ---------------------------------------------------------------- lifecycle

    def _close_connections(self) -> None:
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            conn.open = False
            try:
                conn.sock.close()
            except OSError:
                pass

    # ---------------------------------------------------------------- one peer

    def _serve_conn(self, sock: socket.socket, addr: Any) -> None:
        conn = _Conn(sock, addr)
        try:
            sock.settimeout(30)
            if base.recv_i32(sock) != base.RPC_TRACKER_MAGIC:
                logger.warning("connection from %s is not a tracker peer", addr)
                return
            base.send_i32(sock, base.RPC_TRACKER_MAGIC)
            sock.settimeout(None)
            with self._lock:
                self._conns.add(conn)
            while not self._stop.is_set():
                message = base.recvjson(sock)
                if not isinstance(message, list) or not message:
                    raise ValueError(f"malformed tracker message {message!r}")
                self._handle(conn, message)
        except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
            if not isinstance(err, ConnectionResetError):
                logger.debug("tracker peer %s: %s", addr, err)
        finally:
            self._drop(conn)

    def _drop(self, conn: _Conn) -> None:
        with conn.send_lock:
            conn.open = False
        with self._lock:
            self._conns.discard(conn)
            for queue in self._queues.values():
                queue.values = [v for v in queue.values if v[0] is not conn]
                queue.requests = [r for r in queue.requests if r[2] is not conn]
                heapq.heapify(queue.requests)
        try:
            conn.sock.close()
        except OSError:
            pass

    def _queue(self, key: str) -> _Queue:
        if key not in self._queues:
            self._queues[key] = _Queue()
        return self._queues[key]

    def _handle(self, conn: _Conn, message: list[Any]) -> None:
        code = message[0]
        if code == TrackerCode.PUT:
            key, (port, matchkey) = str(message[1]), message[2]
            host = message[3] if len(message) > 3 and message[3] is not None else conn.addr[0]
            value = (conn, host, int(port), str(matchkey))
            with self._lock:
                conn.pending_matchkeys.add(str(matchkey))
                conn.put_values.append(value)
                queue = self._queue(key)
                queue.values.append(value)
                conn.send(TrackerCode.SUCCESS)
                queue.schedule()
        elif code == TrackerCode.REQUEST:
            key, priority = str(message[1]), int(message[3]) if len(message) > 3 else 1
            with self._lock:
                queue = self._queue(key)
                queue.request(conn, priority)
                queue.schedule()
        elif code == TrackerCode.PING:
            conn.send(TrackerCode.SUCCESS)
        elif code == TrackerCode.GET_PENDING_MATCHKEYS:
            with self._lock:
                conn.send(sorted(conn.pending_matchkeys))
        elif code == TrackerCode.UPDATE_INFO:
            info = dict(message[1])
            addr = list(info.get("addr") or [None, None])
            if addr and addr[0] is None:
                addr[0] = conn.addr[0]
            info["addr"] = addr
            conn.info.update(info)
            conn.send(TrackerCode.SUCCESS)
        elif code == TrackerCode.SUMMARY:
            conn.send([TrackerCode.SUCCESS, self.summary()])
        elif code == TrackerCode.STOP:
            if self.stop_key and len(message) > 1 and message[1] == self.stop_key:
                conn.send(TrackerCode.SUCCESS)
                self.stop()
            else:
                conn.send(TrackerCode.FAIL)
        else:
            raise ValueError(f"unknown tracker code {code!r}")

    def summary(self) -> dict[str, Any]:
        with self._lock:
            queue_info = {
                key: {"free": len(q.values), "pending": len(q.requests)} for key, q in self._queues.items()
            }
            server_info = [
                dict(c.info) for c in self._conns if str(c.info.get("key", "")).startswith("server")
            ]
        return {"queue_info": queue_info, "server_info": server_info}
