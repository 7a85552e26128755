"""Start Disco socket workers on this machine ("a node") for a SocketSession elsewhere.

    TVM_DISCO_AUTHKEY=<hex key printed by the controller> \\
        python -m tvm.backend.extra.disco.worker HOST PORT [NUM_WORKERS]

Each worker is its own process; they connect to the controller at HOST:PORT, which assigns
their ids, and exit when the session shuts down or the controller goes away.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys

from ._transport import authkey_from_env, connect_and_serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("num_workers", type=int, nargs="?", default=1)
    args = parser.parse_args(argv)
    authkey = authkey_from_env()
    if authkey is None:
        parser.error("set TVM_DISCO_AUTHKEY to the key the controller was started with (hex)")
    if args.num_workers < 1:
        parser.error("NUM_WORKERS must be at least 1")
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=connect_and_serve, args=(args.host, args.port, authkey))
        for _ in range(args.num_workers - 1)
    ]
    for p in procs:
        p.start()
    connect_and_serve(args.host, args.port, authkey)
    for p in procs:
        p.join()
    return max([0] + [abs(p.exitcode or 0) for p in procs])


if __name__ == "__main__":
    sys.exit(main())
