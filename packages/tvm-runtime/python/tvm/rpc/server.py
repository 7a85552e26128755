"""The RPC server: accepts apache-tvm 0.27 clients (directly, through a tracker, or through an
RPC proxy it connects out to) and serves each one in its own forked process with its own
working directory.

Why a process per session: a kernel that crashes or hangs, a client that disappears or a
session that outlives its ``-timeout`` only takes its own process down; the listener keeps
serving, and everything the session loaded is freed when its process exits.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import select
import signal
import socket
import threading
from typing import Any

from . import base
from .base import TrackerCode

logger = logging.getLogger("tvm.rpc.server")

# How often an idle server checks in with its tracker (seconds), as apache-tvm's does.
TRACKER_PING_PERIOD = 2.0
# Seconds a client has to complete the handshake.
HANDSHAKE_TIMEOUT = 10.0
# Exit status of a session process whose client went away mid-call.
_EXIT_HANGUP = 3
# Proxy mode: consecutive failures to reach the proxy before giving up, and the pause between
# attempts (apache-tvm's server gives up after 5 retries 5 s apart).
PROXY_MAX_RETRY = 5
PROXY_RETRY_PERIOD = 5.0


def _parse_opts(words: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for word in words:
        if word.startswith("-timeout="):
            try:
                opts["timeout"] = float(word[len("-timeout=") :])
            except ValueError:
                logger.warning("ignoring malformed session option %r", word)
    return opts


def _session_main(conn: socket.socket, workdir: str, max_packet_bytes: int) -> None:
    """Body of a session process."""
    from ._protocol import ProtocolError, exception_packet
    from ._session import ServerSession
    from ._workspace import Workspace

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    workspace = Workspace.__new__(Workspace)
    from pathlib import Path

    workspace.path = Path(workdir)
    os.chdir(workdir)
    conn.settimeout(None)
    session = ServerSession(conn, workspace, max_packet_bytes)

    def hangup() -> None:
        # The session is its own process: ending it frees whatever the abandoned call holds.
        logger.error("session ended: the client disconnected in the middle of a call")
        os._exit(_EXIT_HANGUP)

    session.watch_for_hangup(hangup)
    try:
        session.serve()
    except ProtocolError as err:
        logger.error("session ended: protocol error: %s", err)
        _close_with_error(conn, f"RPCProtocolError: {err}", exception_packet)
    except OSError as err:
        logger.error("session ended: connection error: %s", err)
    finally:
        session.close()
        try:
            conn.close()
        except OSError:
            pass


def _close_with_error(conn: socket.socket, message: str, make_packet: Any) -> None:
    """Tell the client why its session ends, then close without resetting the connection.

    Closing with unread input makes the kernel send a reset that can destroy the error packet
    before the client reads it, so discard what the client still sends (bounded) first.
    """
    try:
        conn.sendall(b"".join(make_packet(message)))
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(0.5)
        drained = 0
        while drained < (1 << 24):
            data = conn.recv(1 << 16)
            if not data:
                break
            drained += len(data)
    except OSError:
        pass


class RPCServer:
    """Listen on ``host:[port, port_end)``, optionally registered with a tracker under ``key``.

    With ``is_proxy``, listen nowhere: ``host:port`` is an RPC proxy (``tvm.exec.rpc_proxy``);
    connect to it as ``server:<key>``, serve the client it pairs us with, and connect again.
    """

    def __init__(
        self,
        host: str = "0.0.0.0",
        port: int = 9091,
        port_end: int = 9199,
        key: str = "",
        tracker_addr: tuple[str, int] | None = None,
        custom_addr: str | None = None,
        max_packet_bytes: int | None = None,
        work_root: str | None = None,
        is_proxy: bool = False,
    ) -> None:
        from ._session import DEFAULT_MAX_PACKET_BYTES

        self.host = host
        self.is_proxy = is_proxy
        self.key = key
        self.tracker_addr = tracker_addr
        self.custom_addr = custom_addr
        self.max_packet_bytes = max_packet_bytes or DEFAULT_MAX_PACKET_BYTES
        self.work_root = work_root
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ctx = multiprocessing.get_context("fork")
        self._proxy_conn: socket.socket | None = None
        if is_proxy:
            if tracker_addr:
                raise ValueError(
                    "a server behind an RPC proxy is not registered with a tracker itself: "
                    "start the proxy with --tracker instead"
                )
            self.sock = None
            self.port = port
            logger.info("serving through the RPC proxy at %s:%d as %r", host, port, key)
            return
        self.sock = base.bind_in_range(host, port, port_end, backlog=8, what="the RPC server")
        self.port = self.sock.getsockname()[1]
        logger.info("bind to %s:%d", host, self.port)

    # ------------------------------------------------------------------ running

    def start(self) -> RPCServer:
        """Serve from a background thread (for tests and embedding)."""
        self._thread = threading.Thread(target=self.serve_forever, name="tvm-rpc-server", daemon=True)
        self._thread.start()
        return self

    def terminate(self) -> None:
        self._stop.set()
        for sock in (self.sock, self._proxy_conn):
            if sock is None:
                continue
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked waiting on it
            except OSError:
                pass
            sock.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        if self.is_proxy:
            self._serve_through_proxy()
            return
        tracker: socket.socket | None = None
        while not self._stop.is_set():
            try:
                if self.tracker_addr and tracker is None:
                    tracker = self._register_with_tracker()
                accepted = self._accept(tracker)
            except (OSError, ValueError) as err:
                if self._stop.is_set():
                    break
                logger.warning("listener: %s", err)
                if tracker is not None:
                    tracker.close()
                    tracker = None
                self._stop.wait(1.0)
                continue
            if accepted is None:
                continue
            conn, addr, opts = accepted
            self._serve_session(conn, addr, opts)
        if tracker is not None:
            tracker.close()

    # ------------------------------------------------------------------ tracker

    def _register_with_tracker(self) -> socket.socket:
        assert self.tracker_addr is not None
        conn = base.connect_with_retry(self.tracker_addr, timeout=60)
        conn.settimeout(30)
        base.send_i32(conn, base.RPC_TRACKER_MAGIC)
        if base.recv_i32(conn) != base.RPC_TRACKER_MAGIC:
            conn.close()
            raise ValueError(f"{self.tracker_addr} is not an RPC tracker")
        info = {"key": "server:" + self.key, "addr": [self.custom_addr, self.port]}
        base.sendjson(conn, [TrackerCode.UPDATE_INFO, info])
        if base.recvjson(conn) != TrackerCode.SUCCESS:
            raise ValueError("tracker refused UPDATE_INFO")
        logger.info("registered with tracker %s:%d as %r", *self.tracker_addr, self.key)
        return conn

    def _put(self, tracker: socket.socket, matchkey: str) -> None:
        base.sendjson(tracker, [TrackerCode.PUT, self.key, [self.port, matchkey], self.custom_addr])
        if base.recvjson(tracker) != TrackerCode.SUCCESS:
            raise ValueError("tracker refused PUT")

    # ------------------------------------------------------------------ accepting

    def _accept(self, tracker: socket.socket | None) -> tuple[socket.socket, Any, dict[str, Any]] | None:
        """Wait for one client that completes the handshake with the expected key."""
        if tracker is not None:
            matchkey = base.random_key(self.key)
            self._put(tracker, matchkey)
        else:
            matchkey = self.key
        old_keys: set[str] = set()
        unmatched = 0
        while not self._stop.is_set():
            ready, _, _ = select.select([self.sock], [], [], TRACKER_PING_PERIOD)
            if not ready:
                if tracker is not None:
                    # Re-issue the match key if the tracker forgot it (as apache-tvm's server does).
                    base.sendjson(tracker, [TrackerCode.GET_PENDING_MATCHKEYS])
                    pending = base.recvjson(tracker)
                    old_keys.add(matchkey)
                    unmatched = 0 if matchkey in pending else unmatched + 1
                    if unmatched * TRACKER_PING_PERIOD > 4 + TRACKER_PING_PERIOD:
                        matchkey = base.random_key(self.key, cmap=old_keys)
                        self._put(tracker, matchkey)
                        unmatched = 0
                continue
            conn, addr = self.sock.accept()
            try:
                conn.settimeout(HANDSHAKE_TIMEOUT)
                if base.recv_i32(conn) != base.RPC_MAGIC:
                    logger.warning("connection from %s is not a TVM RPC client", addr)
                    conn.close()
                    continue
                words = base.recv_key(conn).split()
                if not words or words[0] != "client:" + matchkey:
                    base.send_i32(conn, base.RPC_CODE_MISMATCH)
                    conn.close()
                    logger.warning("key mismatch from %s", addr)
                    continue
                base.send_i32(conn, base.RPC_CODE_SUCCESS)
                base.send_key(conn, "server:" + self.key)
            except (OSError, ValueError) as err:
                logger.warning("handshake with %s failed: %s", addr, err)
                conn.close()
                continue
            return conn, addr, _parse_opts(words[1:])
        return None

    # ------------------------------------------------------------------ proxy mode

    def _serve_through_proxy(self) -> None:
        """Connect to the proxy, serve the client it pairs us with, repeat.

        Raises ConnectionError when the proxy stays unreachable, ValueError when it refuses
        our key (another server already waits under it) or is not an RPC proxy.
        """
        failures = 0
        while not self._stop.is_set():
            try:
                paired = self._wait_for_proxy_client()
            except OSError as err:
                if self._stop.is_set():
                    break
                failures += 1
                if failures > PROXY_MAX_RETRY:
                    raise ConnectionError(
                        f"cannot reach the RPC proxy at {self.host}:{self.port} "
                        f"after {PROXY_MAX_RETRY} retries: {err}"
                    ) from err
                logger.warning(
                    "RPC proxy %s:%d: %s; retry in %gs", self.host, self.port, err, PROXY_RETRY_PERIOD
                )
                self._stop.wait(PROXY_RETRY_PERIOD)
                continue
            failures = 0
            if paired is not None:
                conn, client_key = paired
                self._proxy_conn = None
                self._serve_session(conn, f"{client_key!r} via proxy", _parse_opts(client_key.split()[1:]))

    def _wait_for_proxy_client(self) -> tuple[socket.socket, str] | None:
        """The connection and the client's key once the proxy pairs us, None if it gave up."""
        conn = socket.create_connection((self.host, self.port), timeout=HANDSHAKE_TIMEOUT)
        self._proxy_conn = conn
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            base.send_i32(conn, base.RPC_MAGIC)
            base.send_key(conn, "server:" + self.key)
            conn.settimeout(None)  # the proxy answers when a client comes, however late
            code = base.recv_i32(conn)
            if code == base.RPC_CODE_DUPLICATE:
                raise ValueError(
                    f"the RPC proxy at {self.host}:{self.port} already has a server with key "
                    f"{self.key!r}: give each server behind a proxy its own --key"
                )
            if code == base.RPC_CODE_MISMATCH:
                logger.info("the RPC proxy had no client for %r in time; reconnecting", self.key)
                conn.close()
                return None
            if code != base.RPC_CODE_SUCCESS:
                raise ValueError(f"{self.host}:{self.port} is not an RPC proxy (reply {code:#x})")
            conn.settimeout(HANDSHAKE_TIMEOUT)
            client_key = base.recv_key(conn)
        except BaseException:
            conn.close()
            raise
        return conn, client_key

    # ------------------------------------------------------------------ sessions

    def _serve_session(self, conn: socket.socket, addr: Any, opts: dict[str, Any]) -> None:
        from ._workspace import Workspace

        workspace = Workspace(self.work_root)
        logger.info("connected from %s, serving in %s", addr, workspace.path)
        proc = self._ctx.Process(
            target=_session_main,
            args=(conn, str(workspace.path), self.max_packet_bytes),
            name="tvm-rpc-session",
            daemon=True,
        )
        try:
            proc.start()
            timeout = opts.get("timeout")
            proc.join(timeout if timeout else None)
            if proc.is_alive():
                logger.info("session from %s timed out after %ss, ending it", addr, timeout)
                self._send_timeout(conn, timeout)
                proc.terminate()
                proc.join(2)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            elif proc.exitcode and proc.exitcode != _EXIT_HANGUP:
                logger.error("session process for %s exited with code %s", addr, proc.exitcode)
        finally:
            conn.close()
            workspace.remove()
            logger.info("finished serving %s", addr)

    @staticmethod
    def _send_timeout(conn: socket.socket, timeout: Any) -> None:
        from ._protocol import exception_packet

        message = (
            f"RPCSessionTimeoutError: Your {timeout}s session has expired, "
            'try to increase the "session_timeout" value.'
        )
        try:
            conn.settimeout(2)
            for chunk in exception_packet(message):
                conn.sendall(chunk)
        except OSError:
            pass


class Server:
    """apache-tvm 0.27's ``tvm.rpc.Server``: serving starts at construction, in a background
    thread of this process (each session still runs in its own forked process), and
    ``terminate()`` stops it.  The arguments are 0.27's, in 0.27's order:

    * ``load_library``: shared libraries (a list, or one ``:``-separated string) loaded into the
      server (RTLD_GLOBAL) before it serves, so the global functions they register can be
      called remotely; ``server_init_callback`` runs once before serving, for the same purpose
      (sessions are forked from this process, so they see both);
    * ``silent``: log errors only;
    * ``no_fork``, ``reuse_addr``, ``timeout``: accepted for compatibility; sessions always run in
      a child process, ports are always bound with SO_REUSEADDR, and each session's own
      ``session_timeout`` bounds it.
    """

    def __init__(
        self,
        host: str = "0.0.0.0",
        port: int = 9091,
        port_end: int = 9199,
        is_proxy: bool = False,
        tracker_addr: tuple[str, int] | None = None,
        key: str = "",
        load_library: Any = None,
        custom_addr: str | None = None,
        silent: bool = False,
        no_fork: bool = False,
        server_init_callback: Any = None,
        reuse_addr: bool = True,
        timeout: float | None = None,
    ) -> None:
        del no_fork, reuse_addr, timeout  # see the class docstring
        if silent:
            logger.setLevel(logging.ERROR)
        if isinstance(load_library, str):
            load_library = [path for path in load_library.split(":") if path]
        for path in load_library or ():
            import ctypes

            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        if server_init_callback is not None:
            server_init_callback()
        self._server = RPCServer(
            host,
            port,
            port_end,
            key=key,
            tracker_addr=tracker_addr,
            custom_addr=custom_addr,
            is_proxy=is_proxy,
        )
        self.host = host
        self.port = self._server.port
        self._server.start()

    def terminate(self) -> None:
        """Stop serving (a session in progress ends with its process)."""
        self._server.terminate()

    def __del__(self) -> None:
        server = getattr(self, "_server", None)
        if server is not None:
            server.terminate()
