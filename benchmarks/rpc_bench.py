"""RPC: our ``tvm.exec.rpc_server`` vs apache-tvm 0.27's, driven by the same apache-tvm client.

    python benchmarks/rpc_bench.py --ours-python PY --apache-python PY \\
        [--out results/rpc_bench.json] [--markdown results/rpc_bench.md]

Both servers run at once on loopback (127.0.0.1).  Each round starts one apache-tvm client
child per server, in alternating order (ours, apache, then apache, ours, ...) so machine drift
hits both alike.  A child measures, in one session:

* tiny call: round-trip latency of ``runtime.GetDeviceAttr(cpu, 0, exist)``, a remote global
  with no tensor traffic (blocks of ``--number`` calls; per-call seconds of each block);
* upload: ``tvm.rpc.server.upload`` of a ``--nbytes`` (10 MB) random blob, one packet each,
  written to the session directory (seconds per upload -> MB/s).

The client process is the same apache-tvm client for both servers (tests/rpc/apache_client.py
scenarios ``tiny_call`` and ``upload``).  The same tiny call is also timed from this process
over a raw socket (the handshake by hand, then one prebuilt CALL_FUNC packet sent and its reply
read, ``--raw-blocks`` blocks of ``--number`` calls per round and server): the client's cost is
then a few bytes copied, the same for both servers, so what differs is the server alone.  This
is a benchmark, not a test: exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _harness import child_env, last_line, log, ours_vs_apache_parser, publish, run_child
from _stats import median, ratio, summarize
from core_bench import machine_info

REPO = Path(__file__).resolve().parent.parent
CLIENT = REPO / "tests" / "rpc" / "apache_client.py"
# The wire format, pure Python: loaded from its file (this process has no runtime installed).
sys.path.insert(0, str(REPO / "packages" / "tvm-runtime" / "python" / "tvm" / "rpc"))
import _protocol as wire  # noqa: E402

RPC_MAGIC = 0xFF271  # tvm/rpc/base.py: the handshake's magic, also its success code


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"no server on port {port}")


def start_server(python: str, log_path: Path) -> tuple[subprocess.Popen, int]:
    """``python -m tvm.exec.rpc_server`` on a free loopback port (same flags for both)."""
    port = _free_port()
    argv = [python, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--port-end", str(port + 1), "--silent"]
    proc = spawn_group(argv, log_path)
    _wait_listening(port, proc)
    return proc, port


def spawn_group(argv: list[str], log_path: Path) -> subprocess.Popen:
    """Start an RPC process (server, proxy) logging to ``log_path``, in a process group of its own:
    apache-tvm's servers and proxy run their loop in `popen_worker` children that outlive a parent
    that is only terminated (stop_server ends the whole group)."""
    with log_path.open("w") as logf:
        return subprocess.Popen(
            argv, stdout=logf, stderr=subprocess.STDOUT, cwd="/", env=child_env(), start_new_session=True
        )


def stop_server(proc: subprocess.Popen) -> None:
    """End the server and everything it started: its group gets SIGTERM, then what is left SIGKILL."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            return  # nothing left in the group
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pass


def run_client(apache_python: str, port: int, scenario: str, **opts: Any) -> dict[str, Any]:
    argv = [apache_python, str(CLIENT), scenario, "--port", str(port)]
    for k, v in opts.items():
        argv += [f"--{k}", str(v)]
    _, out = run_child(argv, cwd="/", env=child_env())
    (result,) = json.loads(last_line(out))["results"]
    return result


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the server closed the raw session")
        data += chunk
    return bytes(data)


def _exchange(sock: socket.socket, writer: Any) -> list[Any]:
    sock.sendall(b"".join(bytes(p) for p in writer.packet()))
    (nbytes,) = struct.unpack("<Q", _recv_exactly(sock, 8))
    reader = wire.Reader(_recv_exactly(sock, nbytes))
    code = reader.i32()
    values = reader.packed_seq()
    if code != wire.Code.RETURN:
        raise RuntimeError(f"raw session: reply code {code}: {values}")
    return values


def raw_tiny_call(port: int) -> tuple[socket.socket, bytes]:
    """A session opened by hand and the prebuilt packet of ``runtime.GetDeviceAttr(1, 0, 0)``."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = b"client:"
    sock.sendall(struct.pack("<ii", RPC_MAGIC, len(key)) + key)
    if struct.unpack("<i", _recv_exactly(sock, 4))[0] != RPC_MAGIC:
        raise RuntimeError("raw session: the server refused the handshake")
    _recv_exactly(sock, struct.unpack("<i", _recv_exactly(sock, 4))[0])  # the server's key
    init = wire.Writer(wire.Code.INIT_SERVER)
    init.u64(len(wire.PROTOCOL_VERSION))
    init.raw(wire.PROTOCOL_VERSION.encode())
    init.packed_seq([])
    _exchange(sock, init)
    lookup = wire.Writer(wire.Code.GET_GLOBAL_FUNC)
    lookup.packed_seq(["runtime.GetDeviceAttr"])
    (handle,) = _exchange(sock, lookup)
    call = wire.Writer(wire.Code.CALL_FUNC)
    call.u64(int(handle))
    call.packed_seq([1, 0, 0])
    packet = b"".join(bytes(p) for p in call.packet())
    if _exchange(sock, call) != [int(wire.TypeIndex.INT), 1]:
        raise RuntimeError("raw session: GetDeviceAttr(cpu, 0, exist) did not return 1")
    return sock, packet


def raw_block(sock: socket.socket, packet: bytes, number: int) -> float:
    """Seconds per call over ``number`` calls (each reply read whole before the next call)."""
    reply = _REPLY_BYTES
    t0 = time.perf_counter()
    for _ in range(number):
        sock.sendall(packet)
        got = 0
        while got < reply:
            got += len(sock.recv(reply - got))
    return (time.perf_counter() - t0) / number


# The reply to the raw call, length prefix included: code, count, then two (type index, int64)
# values, RETURN [INT, 1].
_REPLY_BYTES = 8 + 4 + 4 + 2 * (4 + 8)


def render_markdown(results: dict[str, Any]) -> str:
    o, a = results["ours"], results["apache"]
    cfg, mach = results["config"], results["machine"]

    def cell(s: dict[str, float], nd: int = 1) -> str:
        return f"{s['median']:.{nd}f} ({s['p10']:.{nd}f}-{s['p90']:.{nd}f})"

    lines = [
        "| measurement | ours | apache-tvm 0.27 server | ours / apache |",
        "|---|---|---|---|",
        f"| tiny remote call, round trip (µs) | {cell(o['call_us'])} | {cell(a['call_us'])} | "
        f"{results['ratio']['call']:.2f}x |",
        f"| tiny remote call, raw-socket client: the server alone (µs) | {cell(o['raw_call_us'])} | "
        f"{cell(a['raw_call_us'])} | {results['ratio']['raw_call']:.2f}x |",
        f"| upload of {cfg['nbytes'] / 1e6:.0f} MB (MB/s) | {cell(o['upload_mb_s'])} | "
        f"{cell(a['upload_mb_s'])} | "
        f"{results['ratio']['upload_throughput']:.2f}x |",
        "",
        f"median (p10-p90); {cfg['rounds']} interleaved rounds, each one apache-tvm 0.27 client session per "
        f"server: {cfg['repeat']} blocks of {cfg['number']} calls, {cfg['uploads']} uploads; raw client: "
        f"{cfg['raw_blocks']} blocks of {cfg['number']} calls per round and server. Loopback, "
        f"{mach.get('cpu_model', '?')}, {mach.get('nproc', '?')} CPUs.",
    ]
    return "\n".join(lines) + "\n"


def ours_vs_apache_ratios(summary: dict[str, Any], call_ratios: list[float]) -> dict[str, float]:
    """Ours / apache-tvm for the call latency (medians, and per round) and upload throughput, and
    for the raw-socket call where the run measured one (rpc_proxy_bench reuses this without it)."""
    ratios = {
        "call": ratio(summary["ours"]["call_us"]["median"], summary["apache"]["call_us"]["median"]),
        "call_per_round_median": median(call_ratios),
        "upload_throughput": ratio(
            summary["ours"]["upload_mb_s"]["median"], summary["apache"]["upload_mb_s"]["median"]
        ),
    }
    if "raw_call_us" in summary["ours"]:
        ours, apache = summary["ours"]["raw_call_us"], summary["apache"]["raw_call_us"]
        ratios["raw_call"] = ratio(ours["median"], apache["median"])
    return ratios


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = ours_vs_apache_parser(__doc__, "rpc_bench")
    p.add_argument("--rounds", type=int, default=6, help="client sessions per server (default 6)")
    p.add_argument("--number", type=int, default=200, help="calls per latency block (default 200)")
    p.add_argument("--repeat", type=int, default=5, help="latency blocks per session (default 5)")
    p.add_argument("--uploads", type=int, default=3, help="uploads per session (default 3)")
    p.add_argument("--nbytes", type=int, default=10 << 20, help="upload size (default 10 MiB)")
    p.add_argument(
        "--raw-blocks", type=int, default=20, help="raw-socket blocks per round and server (default 20)"
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = args.out.parent
    tmp.mkdir(parents=True, exist_ok=True)
    servers = {
        "ours": start_server(args.ours_python, tmp / "rpc_bench_ours_server.log"),
        "apache": start_server(args.apache_python, tmp / "rpc_bench_apache_server.log"),
    }
    calls: dict[str, list[float]] = {n: [] for n in servers}
    uploads: dict[str, list[float]] = {n: [] for n in servers}
    raw_calls: dict[str, list[float]] = {n: [] for n in servers}
    call_ratios: list[float] = []
    try:
        for r in range(args.rounds):
            order = list(servers) if r % 2 == 0 else list(reversed(servers))
            round_call: dict[str, float] = {}
            for name in order:
                port = servers[name][1]
                res = run_client(
                    args.apache_python, port, "tiny_call", number=args.number, repeat=args.repeat
                )
                calls[name] += [t * 1e6 for t in res["times"]]
                round_call[name] = median(res["times"])
                res = run_client(args.apache_python, port, "upload", nbytes=args.nbytes, repeat=args.uploads)
                uploads[name] += [args.nbytes / t / 1e6 for t in res["times"]]
            # apache-tvm's server serves one session at a time: one raw session per server, now
            raw = {name: raw_tiny_call(servers[name][1]) for name in order}
            try:
                for block in range(args.raw_blocks):  # alternating block by block
                    for name in order if block % 2 == 0 else reversed(order):
                        raw_calls[name].append(raw_block(*raw[name], args.number) * 1e6)
            finally:
                for sock, _ in raw.values():
                    sock.close()
            call_ratios.append(ratio(round_call["ours"], round_call["apache"]))
            log(f"round {r + 1}/{args.rounds}: call ours/apache {call_ratios[-1]:.2f}x")
    finally:
        for proc, _ in servers.values():
            stop_server(proc)
    summary = {
        n: {
            "call_us": summarize(calls[n]).to_dict(3),
            "raw_call_us": summarize(raw_calls[n]).to_dict(3),
            "upload_mb_s": summarize(uploads[n]).to_dict(3),
        }
        for n in servers
    }
    results = {
        "benchmark": "rpc_bench",
        "config": {
            k: getattr(args, k) for k in ("rounds", "number", "repeat", "uploads", "nbytes", "raw_blocks")
        },
        "machine": machine_info(),
        **summary,
        "ratio": ours_vs_apache_ratios(summary, call_ratios),
    }
    publish(results, args.out, args.markdown, render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
