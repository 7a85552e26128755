"""``python -m tvm.exec.query_rpc_tracker``: print what an RPC tracker knows (servers, queues).

The tracker defaults to $TVM_TRACKER_HOST:$TVM_TRACKER_PORT, else 127.0.0.1:9190, as in
apache-tvm 0.27.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="", help="the tracker's address ($TVM_TRACKER_HOST)")
    parser.add_argument("--port", type=int, default=None, help="the tracker's port ($TVM_TRACKER_PORT)")
    args = parser.parse_args(argv)
    host = args.host or os.environ.get("TVM_TRACKER_HOST", "127.0.0.1")
    port = args.port or int(os.environ.get("TVM_TRACKER_PORT", "9190"))
    from tvm.rpc.client import connect_tracker

    try:
        tracker = connect_tracker(host, port)
    except (OSError, RuntimeError) as err:
        print(f"query_rpc_tracker: cannot query the tracker at {host}:{port}: {err}", file=sys.stderr)
        return 1
    print(f"Tracker address {host}:{port}\n")
    print(tracker.text_summary())
    tracker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
