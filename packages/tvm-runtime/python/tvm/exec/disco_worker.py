"""``python -m tvm.exec.disco_worker WORKER_ID NUM_WORKERS NUM_GROUPS READ_FD WRITE_FD``: one
Disco worker process, as ProcessSession's process pool starts it (apache-tvm 0.27's command).

It serves the controller over the two inherited pipe ends (or one socket, for a remote node)
until the session shuts down.  Disco ships in the tvm-runtime-extra wheel.
"""

from __future__ import annotations

import sys

USAGE = "usage: python -m tvm.exec.disco_worker WORKER_ID NUM_WORKERS NUM_GROUPS READ_FD WRITE_FD"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 5 or not all(a.lstrip("-").isdigit() for a in args):
        print(USAGE, file=sys.stderr)
        return 2
    import tvm_ffi

    import tvm  # noqa: F401  (loads the backends, tvm-runtime-extra's Disco among them)

    worker = tvm_ffi.get_global_func("runtime.disco.WorkerProcess", allow_missing=True)
    if worker is None:
        print(
            "tvm.exec.disco_worker: Disco needs the tvm-runtime-extra wheel, which is not installed "
            'or failed to load: pip install "tvm-runtime[extra]" (`python -m tvm.backend` shows why)',
            file=sys.stderr,
        )
        return 1
    try:
        worker(*(int(a) for a in args))
    except (OSError, KeyboardInterrupt):
        pass  # the controller went away
    return 0


if __name__ == "__main__":
    sys.exit(main())
