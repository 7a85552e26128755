"""``tvm.target`` of tvm-runtime: only target *detection* (there is no compiler here).

``tvm.target.detect_target`` has apache-tvm 0.27's ``register_device_target_detector(kind, fn)``
and ``detect_target_from_device(dev_or_str)``; detectors return the target config as a dict,
which apache-tvm's ``tvm.target.Target(cfg)`` accepts where the compiler is installed.
Importing this package imports nothing else: ``import tvm`` never imports it.
"""


def __getattr__(name: str) -> object:
    if name.startswith("__"):
        raise AttributeError(name)
    # E.g. `tvm.target.Target`: say why it is missing rather than only that it is.
    raise AttributeError(
        f"module 'tvm.target' has no attribute {name!r}: tvm-runtime runs compiled models and has "
        "no compiler, so only target detection (tvm.target.detect_target) is here. "
        "detect_target_from_device() returns the target config as a dict; pass it to "
        "tvm.target.Target in an environment with apache-tvm."
    )
