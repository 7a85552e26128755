"""A process whose device driver is hidden or replaced (by the environment the test gives it):
it imports the backend, checks that device 0 does not exist, prints the driver status, loads an
artifact (lazily, so that must work), then makes each named device use, every one of which must
raise RuntimeError or ValueError with the reason, never crash.

    python -m children.no_driver <backend> <artifact> [--host-device N] <probe>...

Prints ``STATUS: <status>``, one ``<probe> RAISED <type> <message>`` (or ``<probe> NO ERROR``)
line a probe and ``DONE`` (backend_testing.no_driver reads them).  ``--host-device``: the
backend's pinned-host device type, which must not exist either (the ``pinned`` probe uses it).
"""

from __future__ import annotations

import argparse
import importlib

import tvm


def probes(dev, mod, detect_target, host_device: int | None) -> dict:
    """Every device use a probe can name."""
    cpu = tvm.cpu(0)
    return {
        "empty": lambda: tvm.runtime.empty((4,), "float32", dev),
        "pinned": lambda: tvm.runtime.empty((4,), "float32", tvm.device(host_device, 0)),
        "detect": lambda: detect_target(dev),
        "sync": lambda: dev.sync(),
        "stream": lambda: dev.create_raw_stream(),
        # the host code of the `add` artifact, called with CPU tensors
        "call": lambda: mod["add"](*[tvm.runtime.empty((1024,), "float32", cpu)] * 3),
        # the device kernel itself, from the artifact's imported device module
        "kernel": lambda: mod.imports[0]["add_kernel"](None, None, None, 16, 64),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("backend")
    parser.add_argument("artifact")
    parser.add_argument("--host-device", type=int)
    parser.add_argument("probe", nargs="+")
    args = parser.parse_args()
    detect_target = importlib.import_module(f"tvm.backend.{args.backend}").detect_target
    dev = tvm.device(args.backend, 0)
    assert dev.exist is False
    assert dev.device_name is None
    assert tvm.runtime.enabled(args.backend)
    if args.host_device is not None:
        assert tvm.device(args.host_device, 0).exist is False
    print("STATUS:", tvm.get_global_func("runtime.DeviceDriverStatus")(int(dev.dlpack_device_type())))
    mod = tvm.runtime.load_module(args.artifact)
    uses = probes(dev, mod, detect_target, args.host_device)
    for what in args.probe:
        try:
            uses[what]()
            print(what, "NO ERROR")
        except (RuntimeError, ValueError) as err:
            print(what, "RAISED", type(err).__name__, str(err).replace("\n", " "))
    print("DONE")


if __name__ == "__main__":
    main()
