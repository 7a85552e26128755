"""Slow and stalled clients against an RPC server: how long a valid client waits because of them.

    python fuzz/rpc_abuse.py [--python PY] [--window 30] [--server-args ...]

PY runs ``-m tvm.exec.rpc_server`` (this interpreter by default: ours; the python of a venv with
apache-tvm 0.27 measures apache's server the same way).  Each case starts a fresh server on
loopback, sets the abuse up, then times a valid client (handshake + INIT_SERVER + one reply, raw
bytes, so both servers are driven identically) for at most --window seconds:

  trickle   a client sends its handshake one byte every --trickle-period seconds
  stalled3  three clients connect and send nothing
  idle      a valid session stays open and idle
  control   nothing else (the baseline)

It prints one JSON line per case and a Markdown table; docs/reliability.md quotes
its figures.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

RPC_MAGIC = 0xFF271
INIT_SERVER = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(python: str, extra: list[str], log: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    argv = [python, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(port)]
    out = log.open("w")
    proc = subprocess.Popen(
        [*argv, "--port-end", str(port + 1), *extra], stdout=out, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            # that probe connection is itself a stalled client to a sequential server: let it go
            time.sleep(0.5)
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"server did not start: {log.read_text()}")


def hello(key: str = "client:") -> bytes:
    data = key.encode()
    return struct.pack("<ii", RPC_MAGIC, len(data)) + data


def init_packet() -> bytes:
    body = struct.pack("<iQ", INIT_SERVER, 5) + b"0.8.0" + struct.pack("<i", 0)
    return struct.pack("<Q", len(body)) + body


def recvall(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def valid_session(port: int, timeout: float) -> socket.socket:
    """A session through handshake and INIT_SERVER's reply (raises on timeout)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.settimeout(timeout)
    sock.sendall(hello())
    (code,) = struct.unpack("<i", recvall(sock, 4))
    assert code == RPC_MAGIC, code
    (keylen,) = struct.unpack("<i", recvall(sock, 4))
    recvall(sock, keylen)
    sock.sendall(init_packet())
    (n,) = struct.unpack("<Q", recvall(sock, 8))
    recvall(sock, n)
    return sock


def time_valid_client(port: int, window: float) -> float | None:
    start = time.monotonic()
    try:
        valid_session(port, window).close()
    except (OSError, ConnectionError, AssertionError):
        return None
    return time.monotonic() - start


def run_case(case: str, python: str, extra: list[str], window: float, period: float, tmp: Path) -> dict:
    proc, port = start_server(python, extra, tmp / f"{case}.log")
    held: list[socket.socket] = []
    stop = threading.Event()
    cut_after: list[float] = []
    try:
        if case == "trickle":
            sock = socket.create_connection(("127.0.0.1", port))
            held.append(sock)
            data = hello("client:" + "x" * 200)
            began = time.monotonic()

            def trickle() -> None:
                for byte in data:
                    try:
                        sock.send(bytes([byte]))
                    except OSError:
                        cut_after.append(time.monotonic() - began)
                        return
                    if stop.wait(period):
                        return

            threading.Thread(target=trickle, daemon=True).start()
            time.sleep(0.2)
        elif case == "stalled3":
            held += [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
            time.sleep(0.2)
        elif case == "idle":
            held.append(valid_session(port, window))
        waited = time_valid_client(port, window)
        if case == "trickle":  # how long the trickler may go on
            limit = time.monotonic() + window
            while not cut_after and time.monotonic() < limit:
                time.sleep(0.1)
        return {
            "case": case,
            "valid_client_s": None if waited is None else round(waited, 3),
            "served": waited is not None,
            "trickler_cut_after_s": round(cut_after[0], 1) if cut_after else None,
            "server_alive": proc.poll() is None,
        }
    finally:
        stop.set()
        for s in held:
            s.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", default=sys.executable, help="interpreter whose tvm.exec.rpc_server is probed")
    p.add_argument("--window", type=float, default=30.0, help="longest wait for the valid client (s)")
    p.add_argument("--trickle-period", type=float, default=1.0)
    p.add_argument("--cases", nargs="*", default=["control", "trickle", "stalled3", "idle"])
    p.add_argument("--tmp", type=Path, default=Path("/tmp"))
    p.add_argument("server_args", nargs="*", help="extra server options (after --)")
    args = p.parse_args()
    version = subprocess.run(
        [args.python, "-c", "import tvm; print(getattr(tvm, '__version__', '?'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    rows = []
    for case in args.cases:
        row = run_case(case, args.python, args.server_args, args.window, args.trickle_period, args.tmp)
        row["tvm"] = version
        print(json.dumps(row), flush=True)
        rows.append(row)
    header = f"valid client waited (s, window {args.window:g})"
    print(f"\n| case | {header} | trickler cut after (s) | server alive |")
    print("|---|---|---|---|")
    for r in rows:
        waited = f"{r['valid_client_s']:.2f}" if r["served"] else f"not served in {args.window:g}"
        print(f"| {r['case']} | {waited} | {r['trickler_cut_after_s'] or '-'} | {r['server_alive']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
