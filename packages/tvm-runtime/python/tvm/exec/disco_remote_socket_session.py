"""``python -m tvm.exec.disco_remote_socket_session HOST PORT NUM_WORKERS``: a remote node of a
Disco SocketSession (apache-tvm 0.27's command).

Run it on every machine but the controller's; it connects to the SocketSession listening on
HOST:PORT and runs NUM_WORKERS workers there.  Set ``TVM_DISCO_AUTHKEY`` (hex) to the
controller's key if the controller uses one.  Disco ships in the tvm-runtime-extra wheel.
"""

from __future__ import annotations

import sys

USAGE = "usage: python -m tvm.exec.disco_remote_socket_session HOST PORT NUM_WORKERS"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args in (["-h"], ["--help"]):
        print(USAGE)
        print(__doc__.split("\n\n", 1)[1].strip())
        return 0
    if len(args) != 3 or not args[1].isdigit() or not args[2].isdigit() or int(args[2]) < 1:
        print(USAGE, file=sys.stderr)
        return 2
    import tvm  # noqa: F401  (loads the backends)

    try:
        from tvm.backend.extra.disco import _node
    except ImportError as err:
        print(
            "tvm.exec.disco_remote_socket_session: Disco needs the tvm-runtime-extra wheel: "
            f'pip install "tvm-runtime[extra]" ({err})',
            file=sys.stderr,
        )
        return 1
    return _node.run(args[0], int(args[1]), int(args[2]))


if __name__ == "__main__":
    sys.exit(main())
