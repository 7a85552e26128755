"""The RPC server: accepts apache-tvm 0.27 clients (directly, through a tracker, or through an
RPC proxy it connects out to) and serves each one in its own forked process with its own
working directory.

Why a process per session: a kernel that crashes or hangs, a client that disappears or a
session that outlives its ``-timeout`` only takes its own process down; the listener keeps
serving, and everything the session loaded is freed when its process exits.

Why a thread per connection: a client that sends its handshake slowly (or never) must not delay
anyone else.  Each accepted connection gets a thread that runs the whole handshake under one
deadline, then supervises the session's process; at most ``max_sessions`` sessions run at once
(with a tracker: one, the tracker hands the device out), and a client beyond that is told so.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import multiprocessing
import os
import select
import signal
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from . import base
from ._policy import SessionPolicy
from .base import AUTH_CONSTRUCTOR, TrackerCode

logger = logging.getLogger("tvm.rpc.server")

# How often an idle server checks in with its tracker (seconds), as apache-tvm's does.
TRACKER_PING_PERIOD = 2.0
# Seconds a client has to complete the whole handshake (magic, key, TLS, first packet).
HANDSHAKE_TIMEOUT = 10.0
# Sessions served at once (direct connections; a tracker hands the device to one at a time).
DEFAULT_MAX_SESSIONS = 4
# Connections allowed to be in their handshake at once; more are closed at once.
MAX_PENDING_HANDSHAKES = 64
# The first packet (INIT_SERVER: version + session constructor) is small.
MAX_INIT_PACKET_BYTES = 1 << 16
# Pause before telling a client its secret was wrong (slows guessing down).
AUTH_FAILURE_DELAY = 0.5
# Exit status of a session process whose client went away mid-call.
_EXIT_HANGUP = 3
# Proxy mode: consecutive failures to reach the proxy before giving up, and the pause between
# attempts (apache-tvm's server gives up after 5 retries 5 s apart).
PROXY_MAX_RETRY = 5
PROXY_RETRY_PERIOD = 5.0
_TLS_RECORD_HANDSHAKE = b"\x16"


class _RefusedError(Exception):
    """The client is told why (an RPC exception packet) and its connection closed."""


@dataclass
class _ClientKey:
    """The handshake key of a client: ``client:<device key> [-timeout=S] [-auth=SECRET]``."""

    key: str
    timeout: float | None = None
    secret: str | None = None
    unknown: list[str] = field(default_factory=list)


def _parse_client_key(text: str) -> _ClientKey | None:
    """None when ``text`` is not a client's key.  A first word that is an option means an empty
    device key, so ``connect(host, port, key="-auth=S")`` works against a server without one."""
    if not text.startswith("client:"):
        return None
    words = text[len("client:") :].split()
    key = ""
    if words and not words[0].startswith("-"):
        key, words = words[0], words[1:]
    out = _ClientKey(key)
    for word in words:
        if word.startswith("-timeout="):
            try:
                out.timeout = float(word[len("-timeout=") :])
            except ValueError:
                out.unknown.append(word)
        elif word.startswith("-auth="):
            out.secret = word[len("-auth=") :]
        else:
            out.unknown.append(word)
    return out


def _session_main(
    conn: socket.socket,
    workdir: str,
    max_packet_bytes: int,
    policy: SessionPolicy,
    idle_timeout: float | None,
    inherited: list[Any],
) -> None:
    """Body of a session process."""
    from ._protocol import ProtocolError, exception_packet
    from ._session import ServerSession, SessionIdleError
    from ._workspace import Workspace

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Sockets of the listener and of other clients came with the fork: holding them would keep
    # those connections open after their owners closed them.
    for sock in inherited:
        try:
            sock.close()
        except OSError:
            pass
    workspace = Workspace.attach(workdir, policy.max_upload_bytes)
    os.chdir(workdir)
    conn.settimeout(None)
    session = ServerSession(
        conn, workspace, max_packet_bytes, policy=policy, idle_timeout=idle_timeout, initialized=True
    )

    def hangup() -> None:
        # The session is its own process: ending it frees whatever the abandoned call holds.
        logger.error("session ended: the client disconnected in the middle of a call")
        os._exit(_EXIT_HANGUP)

    session.watch_for_hangup(hangup)
    try:
        session.serve()
    except SessionIdleError as err:
        logger.info("session ended: %s", err)
        _close_with_error(conn, f"RPCSessionTimeoutError: {err}", exception_packet)
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
        conn.settimeout(2)
        conn.sendall(b"".join(make_packet(message)))
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(0.5)
        drained = 0
        while drained < (1 << 24):
            data = conn.recv(1 << 16)
            if not data:
                break
            drained += len(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def _is_loopback(host: str) -> bool:
    try:
        infos = socket.getaddrinfo(host, None, 0, socket.SOCK_STREAM)
    except OSError:
        return False
    addrs = {str(info[4][0]) for info in infos}
    return bool(addrs) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs)


class RPCServer:
    """Listen on ``host:[port, port_end)``, optionally registered with a tracker under ``key``.

    With ``is_proxy``, listen nowhere: ``host:port`` is an RPC proxy (``tvm.exec.rpc_proxy``);
    connect to it as ``server:<key>``, serve the client it pairs us with, and connect again.

    Safety options (docs/rpc.md, "Threat model and safety options"): ``policy`` restricts what a
    session may do; ``auth_secret`` makes every client prove it knows a shared secret;
    ``ssl_context`` (a server-side ``ssl.SSLContext``) accepts TLS connections only;
    ``idle_timeout`` ends a session whose client sent nothing for that long;
    ``handshake_timeout`` bounds the whole handshake; ``max_sessions`` bounds sessions at once.
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
        *,
        policy: SessionPolicy | None = None,
        auth_secret: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float | None = None,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
    ) -> None:
        from ._session import DEFAULT_MAX_PACKET_BYTES

        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        if auth_secret is not None and not auth_secret:
            raise ValueError("the shared secret is empty")
        if ssl_context is not None and is_proxy:
            raise ValueError(
                "TLS is for direct connections: a server behind an RPC proxy speaks through the proxy"
            )
        self.host = host
        self.is_proxy = is_proxy
        self.key = key
        self.tracker_addr = tracker_addr
        self.custom_addr = custom_addr
        self.max_packet_bytes = max_packet_bytes or DEFAULT_MAX_PACKET_BYTES
        self.work_root = work_root
        self.policy = policy or SessionPolicy()
        self.auth_secret = auth_secret
        self.ssl_context = ssl_context
        # A tracker hands the device to one client at a time (it schedules the device).
        self.max_sessions = 1 if tracker_addr else max_sessions
        self.idle_timeout = idle_timeout
        self.handshake_timeout = handshake_timeout
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ctx = multiprocessing.get_context("fork")
        self._proxy_conn: socket.socket | None = None
        self._tracker: socket.socket | None = None
        self._lock = threading.Lock()
        self._conns: set[Any] = set()  # every client connection this process holds
        self._procs: set[Any] = set()  # running session processes
        self._handshakes = 0
        self._sessions = 0
        self._matchkey: str | None = None  # tracker mode: the key the tracker may hand out now
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
        self.sock = base.bind_in_range(host, port, port_end, backlog=64, what="the RPC server")
        self.port = self.sock.getsockname()[1]
        logger.info("bind to %s:%d", host, self.port)

    def exposure_warning(self) -> str | None:
        """Why this configuration lets strangers run code, or None (loopback, a secret, or
        restricted sessions)."""
        if self.is_proxy or self.auth_secret is not None or self.policy.restricted:
            return None
        if _is_loopback(self.host):
            return None
        return (
            f"the RPC server listens on {self.host}:{self.port} without authentication or "
            "restrictions: anyone who can reach this port can upload a library and run native code "
            "on this machine. Bind to 127.0.0.1, or use --auth-secret-file and --allow measure-only "
            "(docs/rpc.md: 'Threat model and safety options')."
        )

    # ------------------------------------------------------------------ running

    def start(self) -> RPCServer:
        """Serve from a background thread (for tests and embedding)."""
        self._thread = threading.Thread(target=self.serve_forever, name="tvm-rpc-server", daemon=True)
        self._thread.start()
        return self

    def terminate(self) -> None:
        """Stop listening and end every running session."""
        self._stop.set()
        for sock in (self.sock, self._proxy_conn):
            if sock is None:
                continue
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked waiting on it
            except OSError:
                pass
            sock.close()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            proc.terminate()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        if self.is_proxy:
            self._serve_through_proxy()
            return
        listener = self.sock
        assert listener is not None, "a server that is not a proxy's listens from __init__ on"
        last_ping = time.monotonic()
        unmatched = 0
        old_keys: set[str] = set()
        try:
            while not self._stop.is_set():
                try:
                    if self.tracker_addr:
                        if self._tracker is None:
                            self._tracker = self._register_with_tracker()
                            last_ping = time.monotonic()
                        if time.monotonic() - last_ping >= TRACKER_PING_PERIOD:
                            last_ping = time.monotonic()
                            unmatched = self._check_matchkey(unmatched, old_keys)
                        self._offer_to_tracker(old_keys)
                    ready, _, _ = select.select([listener], [], [], 0.2)
                    if ready:
                        conn, addr = listener.accept()
                        self._start_handshake(conn, addr)
                except (OSError, ValueError) as err:
                    if self._stop.is_set():
                        break
                    logger.warning("listener: %s", err)
                    if self._tracker is not None:
                        self._tracker.close()
                        self._tracker = None
                        with self._lock:
                            self._matchkey = None
                    self._stop.wait(1.0)
        finally:
            if self._tracker is not None:
                self._tracker.close()

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

    def _put(self, matchkey: str) -> None:
        assert self._tracker is not None
        base.sendjson(self._tracker, [TrackerCode.PUT, self.key, [self.port, matchkey], self.custom_addr])
        if base.recvjson(self._tracker) != TrackerCode.SUCCESS:
            raise ValueError("tracker refused PUT")

    def _offer_to_tracker(self, old_keys: set[str]) -> None:
        """Tell the tracker the device is free (a fresh match key) when no session runs."""
        with self._lock:
            free = self._matchkey is None and self._sessions == 0
        if not free:
            return
        matchkey = base.random_key(self.key, cmap=old_keys)
        self._put(matchkey)
        old_keys.add(matchkey)
        with self._lock:
            self._matchkey = matchkey

    def _check_matchkey(self, unmatched: int, old_keys: set[str]) -> int:
        """Re-issue the match key when the tracker gave it to a client that never came (as
        apache-tvm's server does)."""
        with self._lock:
            matchkey = self._matchkey
        if matchkey is None:
            return 0
        assert self._tracker is not None
        base.sendjson(self._tracker, [TrackerCode.GET_PENDING_MATCHKEYS])
        pending = base.recvjson(self._tracker)
        unmatched = 0 if matchkey in pending else unmatched + 1
        if unmatched * TRACKER_PING_PERIOD > 4 + TRACKER_PING_PERIOD:
            with self._lock:
                if self._matchkey == matchkey:
                    self._matchkey = None  # _offer_to_tracker puts a fresh one
            return 0
        return unmatched

    # ------------------------------------------------------------------ handshakes

    def _start_handshake(self, conn: socket.socket, addr: Any) -> None:
        with self._lock:
            if self._handshakes >= MAX_PENDING_HANDSHAKES:
                crowded = True
            else:
                crowded = False
                self._handshakes += 1
                self._conns.add(conn)
        if crowded:
            logger.warning(
                "%d handshakes in progress: closing the connection from %s", MAX_PENDING_HANDSHAKES, addr
            )
            conn.close()
            return
        threading.Thread(
            target=self._handle_connection, args=(conn, addr), name="tvm-rpc-handshake", daemon=True
        ).start()

    def _handle_connection(self, conn: socket.socket, addr: Any) -> None:
        """Runs the handshake under one deadline; an admitted client's session follows here."""
        deadline = time.monotonic() + self.handshake_timeout
        box = [conn]  # the connection, TLS-wrapped once the TLS handshake is done
        client: _ClientKey | None = None
        try:
            client = self._handshake(box, addr, deadline)
        except _RefusedError as err:
            logger.warning("refused %s: %s", addr, err)
        except (OSError, ValueError) as err:  # TimeoutError included: the deadline passed
            logger.warning("handshake with %s failed: %s", addr, err)
            box[0].close()
        finally:
            with self._lock:
                self._handshakes -= 1
        try:
            if client is not None:
                self._serve_session(box[0], addr, client)
        finally:
            with self._lock:
                self._conns.difference_update((conn, box[0]))
                if client is not None:
                    self._sessions -= 1

    def _handshake(self, box: list[Any], addr: Any, deadline: float) -> _ClientKey | None:
        """The client's key once it is admitted (a session slot taken), else None; the
        connection is closed unless admitted."""
        conn, tls_missing = self._start_tls(box, deadline)
        if base.recv_i32(conn, deadline) != base.RPC_MAGIC:
            logger.warning("connection from %s is not a TVM RPC client", addr)
            conn.close()
            return None
        client = _parse_client_key(base.recv_key(conn, deadline))
        if client is None or not self._key_matches(client.key):
            base.send_i32(conn, base.RPC_CODE_MISMATCH)
            conn.close()
            logger.warning("key mismatch from %s", addr)
            return None
        base.send_i32(conn, base.RPC_CODE_SUCCESS)
        base.send_key(conn, "server:" + self.key)
        init_args = self._read_init(conn, deadline)
        if tls_missing:
            self._refuse(
                conn,
                "RPCError: this RPC server accepts TLS connections only; connect with tvm-runtime's "
                "client: tvm.rpc.connect(host, port, tls=...) (apache-tvm 0.27's client has no TLS)",
            )
        self._authenticate(conn, client, init_args)
        self._claim_slot(conn, client)
        try:
            self._reply_init(conn)
        except BaseException:
            with self._lock:
                self._sessions -= 1
            raise
        return client

    def _key_matches(self, key: str) -> bool:
        if self.tracker_addr:
            with self._lock:
                return self._matchkey is not None and key == self._matchkey
        return key == self.key

    def _start_tls(self, box: list[Any], deadline: float) -> tuple[socket.socket, bool]:
        """(the connection, TLS wrapped when the server has a context; whether a plain client
        came to a TLS-only server).  ``box[0]`` follows the connection."""
        conn = box[0]
        if self.ssl_context is None:
            return conn, False
        conn.settimeout(max(deadline - time.monotonic(), 0.001))
        first = conn.recv(1, socket.MSG_PEEK)
        if first != _TLS_RECORD_HANDSHAKE:
            return conn, True
        tls = self.ssl_context.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        box[0] = tls
        with self._lock:
            self._conns.discard(conn)
            self._conns.add(tls)
        tls.settimeout(max(deadline - time.monotonic(), 0.001))
        tls.do_handshake()  # CPython bounds the whole TLS handshake by the timeout
        return tls, False

    def _read_init(self, conn: socket.socket, deadline: float) -> list[Any]:
        """The session constructor arguments of the client's first packet (INIT_SERVER)."""
        from ._protocol import PROTOCOL_VERSION, Code, ProtocolError, Reader

        nbytes = struct.unpack("<Q", base.recvall(conn, 8, deadline))[0]
        if not 4 <= nbytes <= MAX_INIT_PACKET_BYTES:
            self._refuse(
                conn, f"RPCProtocolError: first packet of {nbytes} bytes is not an INIT_SERVER packet"
            )
        reader = Reader(base.recvall(conn, nbytes, deadline))
        try:
            code = reader.i32()
            if code != Code.INIT_SERVER:
                self._refuse(conn, f"RPCProtocolError: packet code {code} before the session was initialised")
            version = reader.raw(reader.u64() if reader.remaining() >= 8 else 0).decode("utf-8", "replace")
            args = reader.packed_seq()
        except ProtocolError as err:
            self._refuse(conn, f"RPCProtocolError: {err}")
        if version != PROTOCOL_VERSION:
            self._refuse(
                conn,
                f"RPCError: client protocol version {version!r} does not match the server's "
                f"{PROTOCOL_VERSION!r}; use an apache-tvm 0.27-compatible client",
            )
        if args and args[0] not in ("rpc.LocalSession", AUTH_CONSTRUCTOR):
            self._refuse(
                conn,
                f"RPCError: session constructor {args[0]!r} is not supported by the tvm-runtime RPC "
                "server (only the default local session)",
            )
        return args

    def _authenticate(self, conn: socket.socket, client: _ClientKey, init_args: list[Any]) -> None:
        given = client.secret
        if init_args and init_args[0] == AUTH_CONSTRUCTOR:
            given = str(init_args[1]) if len(init_args) > 1 else ""
        if self.auth_secret is None:
            return
        if given is not None and hmac.compare_digest(given.encode(), self.auth_secret.encode()):
            return
        time.sleep(AUTH_FAILURE_DELAY)
        self._refuse(
            conn,
            "RPCError: authentication failed: this RPC server needs its shared secret, "
            + ("and the one given is wrong" if given is not None else "and none was given")
            + f" (pass it as key option -auth=SECRET, or session_constructor_args=['{AUTH_CONSTRUCTOR}', "
            "SECRET], or tvm-runtime's connect(..., auth=SECRET))",
        )

    def _claim_slot(self, conn: socket.socket, client: _ClientKey) -> None:
        with self._lock:
            if self.tracker_addr:
                if self._matchkey is None or client.key != self._matchkey:
                    reason = "its tracker just handed this device to another client; request it again"
                else:
                    self._matchkey = None  # taken: the next client needs a fresh one
                    reason = ""
            elif self._sessions >= self.max_sessions:
                reason = (
                    f"the server already serves {self._sessions} sessions, its limit "
                    f"(--max-sessions {self.max_sessions}); try again when one ends"
                )
            else:
                reason = ""
            if not reason:
                self._sessions += 1
        if reason:
            self._refuse(conn, f"RPCError: the RPC server is busy: {reason}")

    def _refuse(self, conn: socket.socket, message: str) -> None:
        from ._protocol import exception_packet

        _close_with_error(conn, message, exception_packet)
        raise _RefusedError(message)

    @staticmethod
    def _reply_init(conn: socket.socket) -> None:
        from ._protocol import Code, Writer

        w = Writer(Code.RETURN)
        w.packed_seq([None])
        conn.sendall(b"".join(w.packet()))

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
            if paired is None:
                continue
            conn, client_key = paired
            self._proxy_conn = None
            addr = f"{client_key!r} via proxy"
            client = _parse_client_key(client_key) or _ClientKey("")
            try:
                init_args = self._read_init(conn, time.monotonic() + self.handshake_timeout)
                self._authenticate(conn, client, init_args)
                self._reply_init(conn)
            except _RefusedError as err:
                logger.warning("refused %s: %s", addr, err)
                continue
            except (OSError, ValueError) as err:
                logger.warning("handshake with %s failed: %s", addr, err)
                conn.close()
                continue
            self._serve_session(conn, addr, client)

    def _wait_for_proxy_client(self) -> tuple[socket.socket, str] | None:
        """The connection and the client's key once the proxy pairs us, None if it gave up."""
        conn = socket.create_connection((self.host, self.port), timeout=self.handshake_timeout)
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
            client_key = base.recv_key(conn, time.monotonic() + self.handshake_timeout)
        except BaseException:
            conn.close()
            raise
        return conn, client_key

    # ------------------------------------------------------------------ sessions

    def _serve_session(self, conn: socket.socket, addr: Any, client: _ClientKey) -> None:
        from ._workspace import Workspace

        for word in client.unknown:
            logger.warning("ignoring unknown session option %r from %s", word, addr)
        workspace = Workspace(self.work_root)
        logger.info("connected from %s, serving in %s", addr, workspace.path)
        with self._lock:
            inherited = [
                s for s in (self.sock, self._tracker, *self._conns) if s is not None and s is not conn
            ]
            proc = self._ctx.Process(
                target=_session_main,
                args=(
                    conn,
                    str(workspace.path),
                    self.max_packet_bytes,
                    self.policy,
                    self.idle_timeout,
                    inherited,
                ),
                name="tvm-rpc-session",
                daemon=True,
            )
            proc.start()
            self._procs.add(proc)
        try:
            timeout = client.timeout
            proc.join(timeout if timeout else None)
            if proc.is_alive():
                logger.info("session from %s timed out after %ss, ending it", addr, timeout)
                if not isinstance(conn, ssl.SSLSocket):  # the child owns the TLS state
                    self._send_timeout(conn, timeout)
                proc.terminate()
                proc.join(2)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            elif proc.exitcode and proc.exitcode != _EXIT_HANGUP:
                logger.error("session process for %s exited with code %s", addr, proc.exitcode)
        finally:
            with self._lock:
                self._procs.discard(proc)
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
