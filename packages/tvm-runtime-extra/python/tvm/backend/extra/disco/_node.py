"""A remote node of a SocketSession: ``python -m tvm.exec.disco_remote_socket_session HOST PORT
NUM_WORKERS`` (apache-tvm 0.27's command).

The node connects to the controller at HOST:PORT, learns its node id and the id of its first
worker, then starts its workers as processes (``python -m tvm.exec.disco_worker``), each over a
connection of its own to the controller.  It exits when the controller shuts the session down or
goes away, stopping any worker still running.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from . import _transport
from ._transport import FdChannel


def _connect(host: str, port: int, authkey: bytes | None, timeout_s: float = 60.0) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    sock.settimeout(None)
    fd = sock.detach()
    if authkey is not None:
        probe = FdChannel(os.dup(fd))
        probe.authenticate(authkey, server=False)
        probe.close()
    return fd


def _send_on(fd: int, message: tuple) -> None:
    channel = FdChannel(os.dup(fd))
    channel.send(message)
    channel.close()


def run(host: str, port: int, num_workers: int) -> int:
    authkey = _transport.authkey_from_env()
    control = FdChannel(_connect(host, port, authkey))
    control.send(("node", num_workers, socket.gethostname()))
    reply = control.recv()
    if reply[0] != "node":
        print(f"disco node: the controller at {host}:{port} refused this node: {reply[1]}", file=sys.stderr)
        return 1
    _, node_id, first, per_node, total, num_groups, token = reply
    procs = []
    for local in range(per_node):
        wid = first + local
        fd = _connect(host, port, authkey)
        _send_on(fd, ("worker", wid, token))
        cmd = [
            sys.executable,
            "-m",
            "tvm.exec.disco_worker",
            str(wid),
            str(total),
            str(num_groups),
            str(fd),
            str(fd),
        ]
        procs.append(subprocess.Popen(cmd, pass_fds=(fd,), stdin=subprocess.DEVNULL))
        os.close(fd)
    print(
        f"disco node {node_id}: workers {first}..{first + per_node - 1} of {total} connected to {host}:{port}"
    )
    try:
        while any(p.poll() is None for p in procs):
            try:
                ok, message = control.recv_within(1.0)
            except (EOFError, OSError):
                break  # the controller went away
            if ok and message[0] == "shutdown":
                break
    finally:
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
        control.close()
    return 0
