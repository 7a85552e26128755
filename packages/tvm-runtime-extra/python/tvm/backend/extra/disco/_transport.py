"""How a controller reaches its workers: thread queues, process pipes or TCP sockets.

Each transport yields one channel per worker (``send``/``recv`` of picklable tuples, as
multiprocessing's Connection has) plus the means to tell whether the worker is still alive and
to stop it.  ``recv`` raises EOFError/OSError when the worker is gone.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import secrets
import subprocess
import sys
import threading
from multiprocessing.connection import Client, Connection, Listener
from typing import Any

from ._worker import serve

# How often a waiting controller checks whether the worker it waits for is still alive.
POLL_S = 0.2


class QueueChannel:
    """One end of a pair of queues (threads of this process)."""

    def __init__(self, inbox: queue.SimpleQueue, outbox: queue.SimpleQueue) -> None:
        self._inbox = inbox
        self._outbox = outbox

    def send(self, message: Any) -> None:
        self._outbox.put(message)

    def recv(self) -> Any:
        return self._inbox.get()


class WorkerHandle:
    """The controller's end of one worker."""

    def __init__(self, channel: Any, alive: Any, stop: Any, describe: str) -> None:
        self.channel = channel
        self.is_alive = alive
        self.stop = stop
        self.describe = describe

    def send(self, message: Any) -> None:
        self.channel.send(message)

    def recv(self) -> Any:
        """The next reply; raises EOFError when the worker died instead of waiting forever."""
        if isinstance(self.channel, QueueChannel):
            while True:
                try:
                    return self.channel._inbox.get(timeout=POLL_S)
                except queue.Empty:
                    if not self.is_alive():
                        raise EOFError(f"{self.describe} exited") from None
        while not self.channel.poll(POLL_S):
            if not self.is_alive():
                raise EOFError(f"{self.describe} exited")
        return self.channel.recv()


def thread_workers(num_workers: int) -> list[WorkerHandle]:
    handles = []
    for wid in range(num_workers):
        to_worker: queue.SimpleQueue = queue.SimpleQueue()
        to_controller: queue.SimpleQueue = queue.SimpleQueue()
        worker_end = QueueChannel(to_worker, to_controller)
        thread = threading.Thread(
            target=serve, args=(worker_end, wid, num_workers), name=f"disco-worker-{wid}", daemon=True
        )
        thread.start()
        handles.append(
            WorkerHandle(
                QueueChannel(to_controller, to_worker),
                thread.is_alive,
                lambda t=thread: t.join(timeout=30),
                f"Disco worker {wid} (thread)",
            )
        )
    return handles


def _process_main(conn: Connection, wid: int, num_workers: int) -> None:
    serve(conn, wid, num_workers)


def process_workers(num_workers: int, first_id: int = 0, total: int | None = None) -> list[WorkerHandle]:
    """Worker processes (spawned: a fresh interpreter, no inherited threads or locks)."""
    ctx = mp.get_context("spawn")
    total = num_workers if total is None else total
    handles = []
    for wid in range(first_id, first_id + num_workers):
        parent, child = ctx.Pipe()
        proc = ctx.Process(
            target=_process_main, args=(child, wid, total), name=f"disco-worker-{wid}", daemon=True
        )
        proc.start()
        child.close()  # so that the parent's recv sees EOF when the worker dies

        def stop(p: Any = proc) -> None:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join(timeout=10)

        handles.append(WorkerHandle(parent, proc.is_alive, stop, f"Disco worker {wid} (pid {proc.pid})"))
    return handles


def authkey_from_env() -> bytes | None:
    """The shared key of socket sessions, as hex in $TVM_DISCO_AUTHKEY."""
    raw = os.environ.get("TVM_DISCO_AUTHKEY", "").strip()
    return bytes.fromhex(raw) if raw else None


class SocketListener:
    """Accepts worker connections on host:port (authenticated with a shared key)."""

    def __init__(self, host: str, port: int, authkey: bytes | None = None) -> None:
        self.authkey = authkey or authkey_from_env() or secrets.token_bytes(16)
        self.listener = Listener((host, port), authkey=self.authkey)
        self.address = self.listener.address

    def accept(self, wid: int, total: int) -> WorkerHandle:
        conn = self.listener.accept()
        conn.send(("hello", wid, total))
        state = {"alive": True}

        def alive() -> bool:
            return state["alive"] and not conn.closed

        def stop() -> None:
            state["alive"] = False
            conn.close()

        return WorkerHandle(conn, alive, stop, f"Disco worker {wid} ({self.listener.last_accepted})")

    def close(self) -> None:
        self.listener.close()


def connect_and_serve(host: str, port: int, authkey: bytes) -> None:
    """A socket worker: connect, learn the worker id, serve until shutdown."""
    conn = Client((host, port), authkey=authkey)
    hello, wid, total = conn.recv()
    if hello != "hello":
        raise RuntimeError(f"unexpected greeting {hello!r} from the Disco controller")
    serve(conn, wid, total)


def launch_socket_node(host: str, port: int, num_workers: int, authkey: bytes) -> subprocess.Popen:
    """Start `num_workers` socket workers in a new process group (a local "node")."""
    env = dict(os.environ, TVM_DISCO_AUTHKEY=authkey.hex())
    argv = [sys.executable, "-m", "tvm.backend.extra.disco.worker", host, str(port), str(num_workers)]
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL)
