"""Shared helpers and fixtures of the RPC tests: an apache-tvm 0.27 client venv, our server on loopback.

The apache-tvm venv is the reference peer: its client drives our server, its server and tracker
face our code.  It is created once and cached in pytest's cache directory; set
``TVM_RPC_APACHE_PYTHON`` to the python of an existing venv with ``apache-tvm==0.27.0.post1``
numpy and tornado (its tracker needs it) to skip the install (CI passes one it built beforehand).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ARTIFACTS

APACHE_SPEC = "apache-tvm==0.27.0.post1"
# What apache-tvm's own server and tracker import beyond its declared dependencies (its popen
# worker pickles with cloudpickle and reaps children with psutil; the tracker's loop: tornado).
APACHE_EXTRAS = ("numpy", "tornado", "cloudpickle", "psutil")
HERE = Path(__file__).resolve().parent
CLIENT_SCRIPT = HERE / "apache_client.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited ({proc.returncode}) before listening:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port} after {timeout}s:\n{log.read_text()}")


class Proc:
    """A background process on loopback (server or tracker) with its log file."""

    def __init__(self, argv: list[str], log: Path, port: int | None = None, env: dict | None = None):
        self.log_path = log
        self._log = log.open("w")
        # A session (and process group) of its own: apache-tvm's server, tracker and proxy run their
        # loop in a `tvm.exec.popen_worker` child, which outlives a parent that is only signalled.
        self.proc = subprocess.Popen(
            argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd="/",
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        if port is None:  # our server prints the port it bound
            deadline = time.monotonic() + 60
            while port is None:
                m = re.search(r"listening on [^:]+:(\d+)", log.read_text())
                if m:
                    port = int(m.group(1))
                elif self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server did not start:\n{log.read_text()}")
                else:
                    time.sleep(0.05)
        self.port = port
        wait_for_port(port, self.proc, log)

    def log(self) -> str:
        return self.log_path.read_text()

    def logged(self, text: str, times: int = 1, timeout: float = 30.0) -> bool:
        """Whether ``text`` shows up in the log ``times`` times within ``timeout`` seconds: each
        session is its own process, which writes its last line after the client has moved on."""
        deadline = time.monotonic() + timeout
        while self.log().count(text) < times:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Stop the process and everything it started (its process group)."""
        if self.proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._signal_group(signal.SIGKILL)  # children that outlived it (popen workers)
        self._log.close()

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.proc.pid, signum)
        except ProcessLookupError:
            pass  # nothing left in the group


@pytest.fixture(scope="session")
def apache_python(request: pytest.FixtureRequest) -> str:
    """Path of a python that has apache-tvm 0.27 (the reference client, server and tracker)."""
    given = os.environ.get("TVM_RPC_APACHE_PYTHON")
    if given:
        return given
    venv = Path(request.config.cache.mkdir("apache-tvm-0.27-client"))
    python = venv / "bin" / "python"
    marker = venv / "installed.txt"
    wanted = " ".join((APACHE_SPEC, *APACHE_EXTRAS))
    if not marker.exists() or marker.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
        proc = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", APACHE_SPEC, *APACHE_EXTRAS],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0:
            pytest.fail(
                f"cannot install the {APACHE_SPEC} reference client: {proc.stderr[-400:]}\n"
                "Give PyPI access, or set TVM_RPC_APACHE_PYTHON to a python that has it."
            )
        marker.write_text(wanted)
    return str(python)


def start_our_server(tmp: Path, *extra: str) -> Proc:
    argv = [sys.executable, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", "0"]
    return Proc([*argv, "--port-end", "1", *extra], tmp / f"server-{time.monotonic_ns()}.log")


@pytest.fixture(scope="module")
def our_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    tmp = tmp_path_factory.mktemp("rpc-server")
    work = tmp / "work"
    work.mkdir()
    server = start_our_server(tmp, "--work-dir", str(work))
    server.work_dir = work  # type: ignore[attr-defined]
    yield server
    server.stop()


def run_apache_client(
    python: str, port: int, *steps: str, timeout: float = 120, **options: Any
) -> list[dict[str, Any]]:
    """Run scenario steps of apache_client.py with apache-tvm's client; returns their results."""
    argv = [python, str(CLIENT_SCRIPT), *steps, "--port", str(port), "--artifacts", str(ARTIFACTS)]
    for name, value in options.items():
        argv.append(f"--{name.replace('_', '-')}={value}")  # `=`: a value may start with "-"
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd="/")
    if proc.returncode != 0:
        raise AssertionError(f"apache-tvm client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    out = json.loads(lines[-1])
    assert out["ok"] and out["tvm"] == "0.27.0.post1", out
    return out["results"]


# ------------------------------------------------------------ raw protocol bytes (tvm.rpc._protocol)


def raw_session(port: int, key: str = "client:") -> socket.socket:
    """Handshake and INIT_SERVER by hand; returns the socket of an initialised session."""
    from tvm.rpc import base
    from tvm.rpc._protocol import Code, Writer

    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    base.send_i32(sock, base.RPC_MAGIC)
    base.send_key(sock, key)
    assert base.recv_i32(sock) == base.RPC_CODE_SUCCESS
    assert base.recv_key(sock).startswith("server:")
    w = Writer(Code.INIT_SERVER)
    w.u64(5)
    w.raw(b"0.8.0")
    w.packed_seq([])
    send(sock, w)
    code, values = recv(sock)
    assert code == Code.RETURN and values == [None]
    return sock


def send(sock: socket.socket, writer) -> None:
    sock.sendall(b"".join(writer.packet()))


def recv(sock: socket.socket) -> tuple[int, list]:
    from tvm.rpc import base
    from tvm.rpc._protocol import Reader

    (n,) = struct.unpack("<Q", base.recvall(sock, 8))
    reader = Reader(base.recvall(sock, n))
    return reader.i32(), reader.packed_seq()


def closed_by_server(sock: socket.socket) -> bytes:
    """Everything the server still sends until it closes the connection."""
    chunks = []
    sock.settimeout(10)
    while True:
        data = sock.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def call(sock, name: str, *args):
    from tvm.rpc._protocol import Code, Writer

    w = Writer(Code.GET_GLOBAL_FUNC)
    w.packed_seq([name])
    send(sock, w)
    code, (handle,) = recv(sock)
    assert code == Code.RETURN and handle, name
    w = Writer(Code.CALL_FUNC)
    w.u64(int(handle))
    w.packed_seq(list(args))
    send(sock, w)
    return recv(sock)
