"""Runs the working-memory model and gives its working memory back, reporting what moved.

    python -m children.idle_memory release     # call, release, call again
    python -m children.idle_memory concurrent  # release over and over while another thread calls

Memory is read from /proc/self/smaps_rollup (kilobytes of anonymous memory).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np

from children.reporting import result

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "vm"))
from vm_models import WORKING_MEMORY_SHAPE, expected_working_memory  # noqa: E402

ARTIFACT = TESTS / "vm" / "artifacts" / "working_memory_cpu.so"


def anonymous_kb() -> int:
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Anonymous:"):
                return int(line.split()[1])
    raise RuntimeError("no Anonymous line in smaps_rollup")


def main(mode: str) -> None:
    import tvm
    from tvm.runtime.vm import VirtualMachine

    x = np.random.default_rng(0).standard_normal(WORKING_MEMORY_SHAPE).astype("float32")
    want = expected_working_memory(x)
    vm = VirtualMachine(tvm.runtime.load_module(str(ARTIFACT)), tvm.cpu())
    xt = tvm.runtime.tensor(x)
    if mode == "release":
        first = vm["main"](xt).numpy()
        before = anonymous_kb()
        released = tvm.runtime.release_idle_memory()
        after = anonymous_kb()
        again = tvm.runtime.release_idle_memory()
        second = vm["main"](xt).numpy()
        result(
            first_ok=bool((first == want).all()),
            second_ok=bool((second == want).all()),
            released=released,
            released_again=again,
            anonymous_drop_kb=before - after,
        )
        return
    errors: list[str] = []
    calls = 0
    stop = threading.Event()

    def serve() -> None:
        nonlocal calls
        try:
            while not stop.is_set():
                if not (vm["main"](xt).numpy() == want).all():
                    errors.append("wrong result")
                calls += 1
        except Exception as err:  # noqa: BLE001 (reported to the test, which fails on it)
            errors.append(repr(err))

    worker = threading.Thread(target=serve)
    worker.start()
    releases = 0
    while calls < 6 and not errors:
        tvm.runtime.release_idle_memory()
        releases += 1
    stop.set()
    worker.join()
    result(calls=calls, releases=releases, errors=errors)


if __name__ == "__main__":
    main(sys.argv[1])
