"""RPC proxy: our ``tvm.exec.rpc_proxy`` vs apache-tvm 0.27's, relaying the same server and client.

    python benchmarks/rpc_proxy_bench.py --ours-python PY --apache-python PY \\
        [--out results/rpc_proxy_bench.json] [--markdown results/rpc_proxy_bench.md]

Three routes run at once on loopback (127.0.0.1), each ending at one of our RPC servers
(``tvm.exec.rpc_server``, from --ours-python):

* direct: the client connects to a listening server (the cost without a relay);
* ours: the server runs ``--through-proxy`` behind our proxy, the client connects to the proxy
  with the server's key;
* apache: the same behind apache-tvm 0.27's proxy (tornado, ``--web-port`` on a spare port).

Each round starts one apache-tvm client child per route, in rotating order so machine drift
hits all alike; a child measures tiny-call round trips and 10 MB uploads exactly as
rpc_bench.py does (tests/rpc/apache_client.py scenarios ``tiny_call`` and ``upload``).
This is a benchmark, not a test: exit status 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _harness import log, ours_vs_apache_parser, publish
from _stats import median, ratio, summarize
from core_bench import machine_info
from rpc_bench import (
    _free_port,
    _wait_listening,
    ours_vs_apache_ratios,
    run_client,
    spawn_group,
    start_server,
    stop_server,
)

KEY = "bench"


def start_proxy(python: str, apache: bool, log_path: Path) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    argv = [python, "-m", "tvm.exec.rpc_proxy", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--port-end", str(port + 1)]
    argv += ["--web-port", str(_free_port())] if apache else ["--silent"]
    proc = spawn_group(argv, log_path)
    _wait_listening(port, proc)
    return proc, port


def start_proxied_server(python: str, proxy_port: int, log_path: Path) -> subprocess.Popen:
    argv = [python, "-m", "tvm.exec.rpc_server", "--through-proxy", "--host", "127.0.0.1"]
    return spawn_group([*argv, "--port", str(proxy_port), "--key", KEY, "--silent"], log_path)


def render_markdown(results: dict[str, Any]) -> str:
    r, cfg, mach = results["routes"], results["config"], results["machine"]

    def cell(s: dict[str, float], nd: int = 1) -> str:
        return f"{s['median']:.{nd}f} ({s['p10']:.{nd}f}-{s['p90']:.{nd}f})"

    lines = [
        "| measurement | direct (no proxy) | through our proxy | through apache-tvm 0.27's proxy "
        "| ours / apache |",
        "|---|---|---|---|---|",
        f"| tiny remote call, round trip (µs) | {cell(r['direct']['call_us'])} | "
        f"{cell(r['ours']['call_us'])} | {cell(r['apache']['call_us'])} | {results['ratio']['call']:.2f}x |",
        f"| upload of {cfg['nbytes'] / 1e6:.0f} MB (MB/s) | {cell(r['direct']['upload_mb_s'])} | "
        f"{cell(r['ours']['upload_mb_s'])} | {cell(r['apache']['upload_mb_s'])} | "
        f"{results['ratio']['upload_throughput']:.2f}x |",
        "",
        f"median (p10-p90); our RPC server at the end of every route, the same apache-tvm 0.27 "
        f"client; {cfg['rounds']} rotating rounds of one session per route: {cfg['repeat']} blocks "
        f"of {cfg['number']} calls, {cfg['uploads']} uploads. Loopback, "
        f"{mach.get('cpu_model', '?')}, {mach.get('nproc', '?')} CPUs.",
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = ours_vs_apache_parser(__doc__, "rpc_proxy_bench", apache_needs="apache-tvm 0.27 + tornado")
    p.add_argument("--rounds", type=int, default=6, help="client sessions per route (default 6)")
    p.add_argument("--number", type=int, default=200, help="calls per latency block (default 200)")
    p.add_argument("--repeat", type=int, default=5, help="latency blocks per session (default 5)")
    p.add_argument("--uploads", type=int, default=3, help="uploads per session (default 3)")
    p.add_argument("--nbytes", type=int, default=10 << 20, help="upload size (default 10 MiB)")
    args = p.parse_args(argv)
    if args.quick:  # a smoke run: one session per route, short blocks
        args.rounds, args.number, args.repeat, args.uploads = 1, 50, 2, 1
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = args.out.parent
    tmp.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen] = []
    routes: dict[str, tuple[int, str]] = {}  # name -> (port the client dials, key)
    try:
        server, port = start_server(args.ours_python, tmp / "rpc_proxy_bench_direct_server.log")
        procs.append(server)
        routes["direct"] = (port, "")
        for name, python in (("ours", args.ours_python), ("apache", args.apache_python)):
            proxy, port = start_proxy(python, name == "apache", tmp / f"rpc_proxy_bench_{name}_proxy.log")
            procs.append(proxy)
            log_path = tmp / f"rpc_proxy_bench_{name}_server.log"
            procs.append(start_proxied_server(args.ours_python, port, log_path))
            routes[name] = (port, KEY)
        calls: dict[str, list[float]] = {n: [] for n in routes}
        uploads: dict[str, list[float]] = {n: [] for n in routes}
        call_ratios: list[float] = []
        names = list(routes)
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            round_call: dict[str, float] = {}
            for name in order:
                port, key = routes[name]
                opts: dict[str, Any] = {"key": key} if key else {}
                res = run_client(
                    args.apache_python, port, "tiny_call", number=args.number, repeat=args.repeat, **opts
                )
                calls[name] += [t * 1e6 for t in res["times"]]
                round_call[name] = median(res["times"])
                res = run_client(
                    args.apache_python, port, "upload", nbytes=args.nbytes, repeat=args.uploads, **opts
                )
                uploads[name] += [args.nbytes / t / 1e6 for t in res["times"]]
            call_ratios.append(ratio(round_call["ours"], round_call["apache"]))
            log(f"round {r + 1}/{args.rounds}: call through proxy ours/apache {call_ratios[-1]:.2f}x")
    finally:
        for proc in procs:  # each in its own process group, with the workers it started
            stop_server(proc)
    summary = {
        n: {"call_us": summarize(calls[n]).to_dict(3), "upload_mb_s": summarize(uploads[n]).to_dict(3)}
        for n in routes
    }
    results = {
        "benchmark": "rpc_proxy_bench",
        "config": {k: getattr(args, k) for k in ("rounds", "number", "repeat", "uploads", "nbytes")},
        "machine": machine_info(),
        "routes": summary,
        "ratio": ours_vs_apache_ratios(summary, call_ratios),
    }
    publish(results, args.out, args.markdown, render_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
