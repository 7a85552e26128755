"""``python -m tvm.exec.rpc_server``: serve this machine's runtime to apache-tvm RPC clients.

Options follow apache-tvm 0.27's command so existing device setup scripts keep working.
"""

from __future__ import annotations

import argparse
import logging
import sys


def _tracker_addr(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--tracker expects HOST:PORT, got {text!r}")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port", type=int, default=9090, help="first port to try")
    parser.add_argument("--port-end", type=int, default=9199, help="end of the port range to try")
    parser.add_argument(
        "--through-proxy",
        action="store_true",
        help="serve through the RPC proxy at --host:--port (connect out to it) instead of listening",
    )
    parser.add_argument("--tracker", type=_tracker_addr, help="register with the tracker at HOST:PORT")
    parser.add_argument(
        "--key", default="", help="device key: reported to the tracker, or served under at the proxy"
    )
    parser.add_argument("--custom-addr", help="address reported to the tracker instead of the peer's view")
    parser.add_argument("--silent", action="store_true", help="log errors only")
    parser.add_argument(
        "--max-packet-bytes", type=int, default=None, help="refuse packets larger than this (default 1 GiB)"
    )
    parser.add_argument("--work-dir", default=None, help="parent of the per-session temporary directories")
    parser.add_argument(
        "--load-library",
        help="shared libraries (':'-separated) loaded before serving, so their global functions are callable",
    )
    parser.add_argument(
        "--no-fork",
        action="store_true",
        help="accepted for apache-tvm compatibility (sessions run in a child)",
    )
    args = parser.parse_args(argv)
    if args.tracker and not args.key:
        parser.error("--tracker needs --key (the name clients request the device by)")
    if args.through_proxy and args.tracker:
        parser.error("--through-proxy with --tracker: start the proxy with --tracker instead")

    logging.basicConfig(
        level=logging.ERROR if args.silent else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname)s %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )
    import ctypes

    for path in (args.load_library or "").split(":"):
        if path:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    from tvm.rpc.server import RPCServer

    server = RPCServer(
        host=args.host,
        port=args.port,
        port_end=args.port_end,
        key=args.key,
        tracker_addr=args.tracker,
        custom_addr=args.custom_addr,
        max_packet_bytes=args.max_packet_bytes,
        work_root=args.work_dir,
        is_proxy=args.through_proxy,
    )
    if args.through_proxy:
        print(f"tvm-runtime RPC server serving through the proxy at {args.host}:{server.port}", flush=True)
    else:
        print(f"tvm-runtime RPC server listening on {args.host}:{server.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    except (ConnectionError, ValueError) as err:
        print(f"rpc_server: error: {err}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
