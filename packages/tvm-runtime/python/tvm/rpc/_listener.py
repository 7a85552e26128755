"""The accept loop the tracker and the proxy share: a listening socket on the first free port of a
range, a thread that accepts with a short timeout (so that a stop is seen within half a second),
one daemon thread per connection, and the close of every open connection when it ends."""

from __future__ import annotations

import socket
import threading
from typing import Any

from . import base


class Listener:
    """Subclasses define ``_serve_conn(sock, addr)`` and ``_close_connections()``."""

    def __init__(self, host: str, port: int, port_end: int, what: str, thread_name: str) -> None:
        self.host = host
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_name = thread_name
        self.sock = base.bind_in_range(host, port, port_end, backlog=64, what=what)
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.5)

    def start(self) -> Any:
        self._thread = threading.Thread(target=self.serve_forever, name=self._thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def terminate(self) -> None:
        self.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    sock, addr = self.sock.accept()
                except socket.timeout:
                    continue
                except OSError:
                    break
                threading.Thread(target=self._serve_conn, args=(sock, addr), daemon=True).start()
        finally:
            self._stop.set()
            self.sock.close()
            self._close_connections()

    def _serve_conn(self, sock: socket.socket, addr: Any) -> None:
        raise NotImplementedError

    def _close_connections(self) -> None:
        raise NotImplementedError
