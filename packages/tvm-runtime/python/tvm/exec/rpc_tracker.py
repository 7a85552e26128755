"""``python -m tvm.exec.rpc_tracker``: a device tracker for RPC servers and clients
(apache-tvm 0.27's tracker protocol; no extra dependencies)."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port", type=int, default=9190, help="first port to try")
    parser.add_argument("--port-end", type=int, default=9199, help="end of the port range to try")
    parser.add_argument("--stop-key", default="", help="clients sending STOP with this key stop the tracker")
    parser.add_argument("--silent", action="store_true", help="log errors only")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.ERROR if args.silent else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname)s %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )
    from tvm.rpc.tracker import Tracker

    tracker = Tracker(args.host, args.port, args.port_end, stop_key=args.stop_key)
    print(f"tvm-runtime RPC tracker listening on {args.host}:{tracker.port}", flush=True)
    try:
        tracker.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
