"""How a controller reaches its workers: queues (threads), two pipes (processes of a process
pool) or a socket (processes of a remote node).

Pipe and socket channels carry _wire-encoded messages; queue channels carry the tuples
themselves.  ``WorkerHandle`` is the controller's end of one worker: it knows how to tell that
the worker is gone (its thread ended, its process exited, its end of the channel closed) so
that no wait lasts forever.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from typing import Any, Callable, Optional

import tvm_ffi

from . import _wire

# How often a waiting controller checks whether the worker it waits for is still alive.
POLL_S = 0.2


class WorkerGoneError(Exception):
    """The worker's thread or process ended, or its channel closed."""


class QueueChannel:
    """One end of a pair of queues (threads of this process)."""

    def __init__(self, inbox: queue.SimpleQueue, outbox: queue.SimpleQueue) -> None:
        self._inbox = inbox
        self._outbox = outbox

    def send(self, message: Any) -> None:
        self._outbox.put(message)

    def recv(self) -> Any:
        return self._inbox.get()

    def recv_within(self, timeout: float) -> tuple[bool, Any]:
        try:
            return True, self._inbox.get(timeout=timeout)
        except queue.Empty:
            return False, None

    def close(self) -> None:
        pass


class FdChannel:
    """Encoded messages over file descriptors: a pipe pair, or one socket for both ways."""

    def __init__(self, read_fd: int, write_fd: int | None = None) -> None:
        if write_fd is None or write_fd == read_fd:
            self._r = self._w = Connection(read_fd)
        else:
            self._r = Connection(read_fd, writable=False)
            self._w = Connection(write_fd, readable=False)

    def send(self, message: Any) -> None:
        self._w.send_bytes(_wire.encode(message))

    def recv(self) -> Any:
        return _wire.decode(self._r.recv_bytes())

    def recv_within(self, timeout: float) -> tuple[bool, Any]:
        if not self._r.poll(timeout):
            return False, None
        return True, self.recv()

    def authenticate(self, authkey: bytes, server: bool) -> None:
        """multiprocessing's HMAC challenge, both ways (the side holding the listener first)."""
        conn = self._r if self._r is self._w else None
        if conn is None:
            raise ValueError("authentication needs a socket channel")
        if server:
            deliver_challenge(conn, authkey)
            answer_challenge(conn, authkey)
        else:
            answer_challenge(conn, authkey)
            deliver_challenge(conn, authkey)

    def close(self) -> None:
        for c in {id(self._r): self._r, id(self._w): self._w}.values():
            try:
                c.close()
            except OSError:
                pass


class WorkerHandle:
    """The controller's end of one worker."""

    def __init__(
        self,
        worker_id: int,
        channel: Any,
        describe: str,
        alive: Optional[Callable[[], bool]] = None,
        stop: Optional[Callable[[float], None]] = None,
        node: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        self.worker_id = worker_id
        self.channel = channel
        self.describe = describe
        self._alive = alive
        self._stop = stop
        self.node = node
        self.host = host  # where the worker can be reached by its peers (multi-node CCL)
        self.gone = False

    def send(self, message: Any) -> None:
        try:
            self.channel.send(message)
        except (OSError, EOFError, ValueError) as err:
            self.gone = True
            raise WorkerGoneError(f"it exited (its end of the channel closed: {err})") from None

    def is_alive(self) -> bool:
        return not self.gone and (self._alive is None or self._alive())

    def recv(self, timeout: float | None = None) -> tuple[bool, Any]:
        """(True, message), or (False, None) after `timeout` seconds (None: wait as long as the
        worker lives); raises WorkerGoneError when the worker ended instead of answering."""
        waited = 0.0
        while True:
            step = POLL_S if timeout is None else min(POLL_S, max(0.0, timeout - waited))
            try:
                ok, message = self.channel.recv_within(step)
            except (EOFError, OSError) as err:
                self.gone = True
                raise WorkerGoneError("it exited (its end of the channel closed)") from err
            if ok:
                return True, message
            if not self.is_alive():
                self.gone = True
                raise WorkerGoneError("it exited")
            waited += step
            if timeout is not None and waited >= timeout:
                return False, None

    def stop(self, timeout: float) -> None:
        if self._stop is not None:
            self._stop(timeout)
        self.channel.close()


# ----------------------------------------------------------------------------- threads


def thread_worker(worker_id: int, num_workers: int, num_groups: int) -> WorkerHandle:
    """A worker on a thread of this process."""
    from ._worker import serve

    to_worker: queue.SimpleQueue = queue.SimpleQueue()
    to_controller: queue.SimpleQueue = queue.SimpleQueue()
    thread = threading.Thread(
        target=serve,
        args=(QueueChannel(to_worker, to_controller), worker_id, num_workers, num_groups),
        name=f"disco-worker-{worker_id}",
        daemon=True,
    )
    thread.start()
    return WorkerHandle(
        worker_id,
        QueueChannel(to_controller, to_worker),
        f"Disco worker {worker_id} (thread)",
        alive=thread.is_alive,
        stop=lambda timeout: thread.join(timeout),
    )


# ------------------------------------------------------------------------- process pool

# Processes started by create_process_pool, by the controller's read fd (for liveness and pids).
_POOL_PROCESSES: dict[int, subprocess.Popen] = {}


def _wait_or_kill(proc: subprocess.Popen, timeout: float) -> None:
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def create_process_pool(num_workers: int, num_groups: int, entrypoint: str) -> Callable[[int], Any]:
    """``runtime.disco.create_process_pool`` as apache-tvm 0.27 defines it (MLC-LLM registers its
    own under the same name): workers 1..num_workers-1 run ``python -m <entrypoint> <worker_id>
    <num_workers> <num_groups> <read_fd> <write_fd>``; pool(i) starts worker i and returns
    Shape([read_fd, write_fd]) of the controller's ends, pool(0) stops them all."""
    procs: list[subprocess.Popen] = []

    def pool(worker_id: int) -> Any:
        if worker_id == 0:
            for proc in procs:
                _wait_or_kill(proc, 10)
            procs.clear()
            return None
        main_read, worker_write = os.pipe()
        worker_read, main_write = os.pipe()
        cmd = [sys.executable, "-m", entrypoint, str(worker_id), str(num_workers), str(num_groups)]
        cmd += [str(worker_read), str(worker_write)]
        try:
            proc = subprocess.Popen(cmd, pass_fds=(worker_read, worker_write), stdin=subprocess.DEVNULL)
        finally:
            os.close(worker_read)
            os.close(worker_write)
        procs.append(proc)
        _POOL_PROCESSES[main_read] = proc
        return tvm_ffi.Shape((main_read, main_write))

    return pool


def pool_worker(worker_id: int, fds: Any, pool: Callable[[int], Any] | None = None) -> WorkerHandle:
    """The handle of a worker started by a process pool (ours or one registered by the user)."""
    read_fd, write_fd = (int(x) for x in fds)
    proc = _POOL_PROCESSES.pop(read_fd, None)
    describe = f"Disco worker {worker_id}" + (f" (pid {proc.pid})" if proc is not None else "")

    def alive() -> bool:
        return proc is None or proc.poll() is None

    def stop(timeout: float) -> None:
        if proc is not None:
            _wait_or_kill(proc, timeout)

    return WorkerHandle(worker_id, FdChannel(read_fd, write_fd), describe, alive=alive, stop=stop)


# ------------------------------------------------------------------------------ sockets


def authkey_from_env() -> bytes | None:
    """The optional shared key of socket sessions, as hex in $TVM_DISCO_AUTHKEY."""
    raw = os.environ.get("TVM_DISCO_AUTHKEY", "").strip()
    if not raw:
        return None
    try:
        return bytes.fromhex(raw)
    except ValueError:
        raise ValueError("TVM_DISCO_AUTHKEY must be hexadecimal (e.g. from secrets.token_hex(16))") from None


def launch_local_node(host: str, port: int, num_workers: int) -> subprocess.Popen:
    """A remote node on this machine (tests): what another machine would start by hand."""
    argv = [sys.executable, "-m", "tvm.exec.disco_remote_socket_session", host, str(port), str(num_workers)]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL)
