"""``python -m tvm.exec.rpc_proxy``: relay RPC sessions to servers that cannot accept connections.

Servers started with ``rpc_server --through-proxy --host PROXY --port PORT --key K`` connect out
to the proxy; clients call ``tvm.rpc.connect(PROXY, PORT, key=K)``.  With ``--tracker`` the proxy
announces its servers to that tracker, and clients reach them with ``connect_tracker().request(K)``.
Options follow apache-tvm 0.27's command (its websocket ``--web-port`` relay is not provided).
"""

from __future__ import annotations

import argparse
import logging
import sys

from .rpc_server import _tracker_addr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=9090, help="first port to try")
    parser.add_argument("--port-end", type=int, default=9199, help="end of the port range to try")
    parser.add_argument(
        "--tracker", type=_tracker_addr, help="announce proxied servers to the tracker at HOST:PORT"
    )
    parser.add_argument(
        "--timeout-client", type=float, default=600.0, help="seconds a client waits for a server of its key"
    )
    parser.add_argument(
        "--timeout-server",
        type=float,
        default=600.0,
        help="seconds a server waits for a client before it reconnects",
    )
    parser.add_argument(
        "--web-port", type=int, default=0, help="not supported (apache-tvm's websocket relay)"
    )
    parser.add_argument("--silent", action="store_true", help="log errors only")
    args = parser.parse_args(argv)
    if args.web_port:
        parser.error(
            "--web-port: tvm-runtime's proxy has no websocket (browser) relay; run apache-tvm's for that"
        )

    logging.basicConfig(
        level=logging.ERROR if args.silent else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname)s %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )
    from tvm.rpc.proxy import Proxy

    try:
        proxy = Proxy(
            args.host,
            args.port,
            args.port_end,
            timeout_client=args.timeout_client,
            timeout_server=args.timeout_server,
            tracker_addr=args.tracker,
        )
    except ValueError as err:
        parser.error(str(err))
    print(f"tvm-runtime RPC proxy listening on {args.host}:{proxy.port}", flush=True)
    try:
        proxy.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
