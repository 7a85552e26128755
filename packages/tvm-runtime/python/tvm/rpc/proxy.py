"""The RPC proxy: a relay for RPC servers that cannot accept connections (behind NAT, a phone).

A server connects *out* to the proxy with the handshake key ``server:<key>``, a client
connects with ``client:<key>``; the proxy pairs the two, answers each handshake with the
other's key (so both sides see an ordinary RPC handshake), then forwards bytes both ways until
either side closes.  With a tracker, the proxy announces every waiting server to it under a
fresh match key, so ``connect_tracker(...).request(key)`` reaches proxied devices too.

Speaks apache-tvm 0.27's proxy protocol over TCP; its websocket (browser) relay is not
provided.  One thread per connection, as the tracker: a proxy relays tens of devices.
"""

from __future__ import annotations

import logging
import select
import socket
import struct
import threading
import time
from typing import Any

from . import base
from ._listener import Listener
from .base import TrackerCode

logger = logging.getLogger("tvm.rpc.proxy")

# Seconds a peer has to send the magic and its key.
HANDSHAKE_TIMEOUT = 10.0
# How often the proxy checks in with its tracker (seconds), as apache-tvm's proxy does.
TRACKER_UPDATE_PERIOD = 2.0
# A server the tracker handed out but no client claimed within this many seconds gets a fresh
# match key (the client that was given the old one is gone).
UNCLAIMED_KEY_TIMEOUT = 5.0
# Once one side of a pair has closed, how long the other may keep its half open.
HALF_CLOSE_LINGER = 60.0
# How often a peer waiting for its partner checks that it is still connected.
_WAIT_POLL = 0.25
_CHUNK = 1 << 16


class _Peer:
    """One connection to the proxy after its handshake: a server or a client of ``match_key``."""

    def __init__(self, sock: socket.socket, addr: Any, rpc_key: str) -> None:
        self.sock = sock
        self.addr = addr
        self.rpc_key = rpc_key  # the whole handshake key, e.g. "client:board -timeout=60"
        self.role, _, rest = rpc_key.partition(":")
        words = rest.split()
        self.match_key = words[0] if words else ""
        self.partner: _Peer | None = None
        self.ready = threading.Event()  # set once both handshake replies are sent
        self.done = False  # this side's bytes are all forwarded
        self.linger: threading.Timer | None = None  # ends a half-closed pair that stays open
        self.unclaimed_since: float | None = None  # tracker mode: handed out, not yet claimed

    def name(self) -> str:
        return f"{self.role} {self.match_key!r} from {self.addr[0]}:{self.addr[1]}"

    def reply(self, code: int, key: str | None = None) -> None:
        data = struct.pack("<i", code)
        if key is not None:
            raw = key.encode("utf-8")
            data += struct.pack("<i", len(raw)) + raw
        self.sock.sendall(data)


def _shutdown(sock: socket.socket, how: int = socket.SHUT_RDWR) -> None:
    try:
        sock.shutdown(how)
    except OSError:
        pass


class Proxy(Listener):
    """Relay RPC sessions on ``host:[port, port_end)`` (``start()`` runs it in a thread).

    ``timeout_client`` / ``timeout_server``: seconds a client / server waits for its partner
    before the proxy answers "no match" and closes it (a proxied server then reconnects).  With
    ``tracker_addr`` the waiting servers are announced to that tracker and a client must bring
    a match key the tracker gave it; servers then wait without a time limit.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9091,
        port_end: int = 9199,
        web_port: int = 0,
        timeout_client: float = 600.0,
        timeout_server: float = 600.0,
        tracker_addr: tuple[str, int] | None = None,
    ) -> None:
        if web_port:
            raise ValueError(
                "tvm-runtime's RPC proxy has no websocket (browser) relay: leave web_port at 0, "
                "or run apache-tvm's proxy for browser RPC servers"
            )
        for name, value in (("timeout_client", timeout_client), ("timeout_server", timeout_server)):
            if not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        super().__init__(host, port, port_end, what="the RPC proxy", thread_name="tvm-rpc-proxy")
        self.timeout_client = float(timeout_client)
        self.timeout_server = float(timeout_server)
        self.tracker_addr = tracker_addr
        self._servers: dict[str, _Peer] = {}  # waiting for a client, by match key
        self._clients: dict[str, _Peer] = {}  # waiting for a server (no tracker)
        self._peers: set[_Peer] = set()
        self._tracker = _TrackerLink(self, tracker_addr) if tracker_addr else None
        logger.info("proxy bound to %s:%d", host, self.port)

    # ---------------------------------------------------------------- lifecycle

    def serve_forever(self) -> None:
        if self._tracker is not None:
            threading.Thread(target=self._tracker.run, name="tvm-rpc-proxy-tracker", daemon=True).start()
        super().serve_forever()

    def _close_connections(self) -> None:
        with self._lock:
            peers = list(self._peers)
        for peer in peers:
            _shutdown(peer.sock)

    # ---------------------------------------------------------------- one connection

    def _serve_conn(self, sock: socket.socket, addr: Any) -> None:
        try:
            peer = self._handshake(sock, addr)
        except (OSError, ValueError) as err:
            # A peer that closes before its handshake is usually a port probe, not a fault.
            level = logging.INFO if isinstance(err, ConnectionResetError) else logging.WARNING
            logger.log(level, "handshake with %s:%s failed: %s", addr[0], addr[1], err)
            sock.close()
            return
        if peer is None:
            sock.close()
            return
        with self._lock:
            self._peers.add(peer)
        try:
            if self._match(peer):
                self._forward(peer)
        finally:
            with self._lock:
                self._peers.discard(peer)

    def _handshake(self, sock: socket.socket, addr: Any) -> _Peer | None:
        deadline = time.monotonic() + HANDSHAKE_TIMEOUT  # for the whole handshake, not per byte
        if base.recv_i32(sock, deadline) != base.RPC_MAGIC:
            logger.warning("connection from %s:%s is not a TVM RPC peer", addr[0], addr[1])
            return None
        peer = _Peer(sock, addr, base.recv_key(sock, deadline))
        if peer.role not in ("server", "client"):
            logger.warning(
                "%s:%s sent key %r, expected server:<key> or client:<key>", *addr[:2], peer.rpc_key
            )
            peer.reply(base.RPC_CODE_MISMATCH)
            return None
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        logger.info("%s connected", peer.name())
        return peer

    # ---------------------------------------------------------------- pairing

    def _match(self, peer: _Peer) -> bool:
        """Pair ``peer`` now or wait for its partner; False when it ends unpaired (and closed)."""
        is_server = peer.role == "server"
        own, other = (self._servers, self._clients) if is_server else (self._clients, self._servers)
        refusal: int | None = None
        with self._lock:
            partner = None if (is_server and self._tracker) else other.pop(peer.match_key, None)
            if partner is not None:
                peer.partner, partner.partner = partner, peer
            elif self._tracker is not None and not is_server:
                refusal = base.RPC_CODE_MISMATCH  # the tracker hands out keys of waiting servers only
            elif self._tracker is not None:
                peer.match_key = base.random_key(peer.match_key, cmap=own)
                own[peer.match_key] = peer
                self._tracker.announce(peer.match_key)
            elif peer.match_key in own:
                refusal = base.RPC_CODE_DUPLICATE
            else:
                own[peer.match_key] = peer
        if refusal is not None:
            why = "no server waits for it" if refusal == base.RPC_CODE_MISMATCH else "that key is taken"
            logger.warning("refusing %s: %s", peer.name(), why)
            self._refuse(peer, refusal)
            return False
        if partner is not None:
            self._pair_up(partner, peer)
            return True
        if self._tracker is not None:
            timeout = None  # announced to the tracker: wait until a client claims it
        else:
            timeout = self.timeout_server if is_server else self.timeout_client
        return self._wait_for_partner(peer, own, timeout)

    def _pair_up(self, waiting: _Peer, arriving: _Peer) -> None:
        try:
            waiting.reply(base.RPC_CODE_SUCCESS, arriving.rpc_key)
            arriving.reply(base.RPC_CODE_SUCCESS, waiting.rpc_key)
            logger.info("paired %s with %s", waiting.name(), arriving.name())
        except OSError as err:
            logger.warning("pairing %s with %s failed: %s", waiting.name(), arriving.name(), err)
            _shutdown(waiting.sock)
            _shutdown(arriving.sock)
        waiting.ready.set()
        arriving.ready.set()

    def _wait_for_partner(self, peer: _Peer, pool: dict[str, _Peer], timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        poller = select.poll()  # not select.select: it fails on descriptors above 1023
        poller.register(peer.sock, select.POLLIN)
        while True:
            readable = bool(poller.poll(_WAIT_POLL * 1000))
            with self._lock:
                if peer.partner is not None:
                    break
                why = None
                if readable:
                    why = self._unpaired_input(peer)
                elif deadline is not None and time.monotonic() > deadline:
                    why = f"no partner within {timeout:g}s"
                elif self._stop.is_set():
                    why = "the proxy stops"
                if why is not None and pool.get(peer.match_key) is peer:
                    del pool[peer.match_key]
            if why is not None:
                logger.info("dropping %s: %s", peer.name(), why)
                self._refuse(peer, base.RPC_CODE_MISMATCH if not readable else None)
                return False
        peer.ready.wait()
        return True

    @staticmethod
    def _unpaired_input(peer: _Peer) -> str | None:
        """Why a peer that is readable before it has a partner must go (None: a false alarm)."""
        try:
            data = peer.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return None
        except OSError as err:
            return f"connection error: {err}"
        # Nobody may talk before the pairing reply: apache-tvm's proxy drops such peers too.
        return "disconnected while waiting" if not data else "sent data before being paired"

    @staticmethod
    def _refuse(peer: _Peer, code: int | None) -> None:
        try:
            if code is not None:
                peer.reply(code)
            peer.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        peer.sock.close()

    # ---------------------------------------------------------------- forwarding

    def _forward(self, peer: _Peer) -> None:
        """Copy what ``peer`` sends to its partner until it closes (the partner's thread does the
        other direction).  A close is passed on as a half-close so bytes in flight still arrive."""
        partner = peer.partner
        assert partner is not None
        buf = bytearray(_CHUNK)
        view = memoryview(buf)
        try:
            while True:
                n = peer.sock.recv_into(view)
                if n == 0:
                    break
                partner.sock.sendall(view[:n])
            _shutdown(partner.sock, socket.SHUT_WR)
        except OSError as err:
            logger.info("%s: connection error: %s", peer.name(), err)
            _shutdown(peer.sock)
            _shutdown(partner.sock)
        with self._lock:
            peer.done = True
            both_done = partner.done
            if both_done and partner.linger is not None:
                partner.linger.cancel()
            elif not both_done:
                # The other side may keep its half open forever; do not let it hold the pair.
                peer.linger = threading.Timer(HALF_CLOSE_LINGER, _shutdown, args=(partner.sock,))
                peer.linger.daemon = True
                peer.linger.start()
        if both_done:
            logger.info("session of %s and %s ended", partner.name(), peer.name())
            peer.sock.close()
            partner.sock.close()


class _TrackerLink:
    """Keeps the tracker told which proxied servers are free: a PUT for every waiting server,
    and a fresh match key for a server the tracker handed out that no client came for."""

    def __init__(self, proxy: Proxy, addr: tuple[str, int]) -> None:
        self.proxy = proxy
        self.addr = addr
        self.sock: socket.socket | None = None
        self.to_put: list[str] = []  # guarded by proxy._lock
        self.reported_keys: set[str] = set()
        self.wake = threading.Event()

    def announce(self, match_key: str) -> None:
        """Called with the proxy's lock held."""
        self.to_put.append(match_key)
        self.wake.set()

    def run(self) -> None:
        stop = self.proxy._stop
        next_check = time.monotonic()
        while not stop.is_set():
            try:
                if self.sock is None:
                    self._connect()
                self._flush_puts()
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + TRACKER_UPDATE_PERIOD
                    self._renew_unclaimed()
                    self._flush_puts()
            except (OSError, ValueError) as err:
                logger.warning(
                    "tracker %s:%d: %s; reconnecting in %gs", *self.addr, err, TRACKER_UPDATE_PERIOD
                )
                self._close()
                stop.wait(TRACKER_UPDATE_PERIOD)
                continue
            self.wake.wait(max(0.0, next_check - time.monotonic()))
            self.wake.clear()
        self._close()

    def _close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _connect(self) -> None:
        sock = socket.create_connection(self.addr, timeout=HANDSHAKE_TIMEOUT)
        self.sock = sock
        base.send_i32(sock, base.RPC_TRACKER_MAGIC)
        if base.recv_i32(sock) != base.RPC_TRACKER_MAGIC:
            raise ValueError("not an RPC tracker")
        sock.settimeout(30)
        # A new tracker connection knows nothing of us: announce every waiting server again.
        with self.proxy._lock:
            self.to_put = list(self.proxy._servers)
        self.reported_keys.clear()
        logger.info("connected to tracker %s:%d", *self.addr)

    def _flush_puts(self) -> None:
        assert self.sock is not None
        with self.proxy._lock:
            keys = [k for k in self.to_put if k in self.proxy._servers]
            self.to_put = []
        new_rpc_keys = False
        for match_key in keys:
            rpc_key = base.split_random_key(match_key)[0]
            base.sendjson(self.sock, [TrackerCode.PUT, rpc_key, [self.proxy.port, match_key], None])
            if base.recvjson(self.sock) != TrackerCode.SUCCESS:
                raise ValueError(f"tracker refused PUT of {rpc_key!r}")
            if rpc_key not in self.reported_keys:
                self.reported_keys.add(rpc_key)
                new_rpc_keys = True
        if new_rpc_keys:
            # The tracker's summary lists the proxy as one server offering these keys.
            info = {
                "key": f"server:proxy[{','.join(sorted(self.reported_keys))}]",
                "addr": [None, self.proxy.port],
            }
            base.sendjson(self.sock, [TrackerCode.UPDATE_INFO, info])
            if base.recvjson(self.sock) != TrackerCode.SUCCESS:
                raise ValueError("tracker refused UPDATE_INFO")

    def _renew_unclaimed(self) -> None:
        assert self.sock is not None
        base.sendjson(self.sock, [TrackerCode.GET_PENDING_MATCHKEYS])
        pending = set(base.recvjson(self.sock))
        now = time.monotonic()
        with self.proxy._lock:
            servers = self.proxy._servers
            for key, peer in list(servers.items()):
                if key in pending:
                    peer.unclaimed_since = None
                elif peer.unclaimed_since is None:
                    peer.unclaimed_since = now
                elif now - peer.unclaimed_since > UNCLAIMED_KEY_TIMEOUT:
                    del servers[key]
                    peer.match_key = base.random_key(base.split_random_key(key)[0], cmap=servers)
                    peer.unclaimed_since = None
                    servers[peer.match_key] = peer
                    self.to_put.append(peer.match_key)
                    logger.info("%s was not claimed, announced again", peer.name())
