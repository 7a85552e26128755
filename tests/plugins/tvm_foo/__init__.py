"""An out-of-tree backend written for apache-tvm 0.27's plugin protocol, unchanged.

Its distribution declares ``[project.entry-points."tvm.backends"] tvm_foo = "tvm_foo:_autoload"``;
``import tvm`` calls ``_autoload()``, which registers a global function and a target detector
for ``ext_dev`` the way an apache-tvm plugin does.  ``CALLS`` records what it saw when it ran,
so tests can check when and how often that was.
"""

import tvm_ffi

CALLS = []


def _detect_ext_dev(dev):
    return {"kind": "foo", "device_name": str(dev.device_name)}


def _autoload():
    from tvm.backend.loader import is_loaded
    from tvm.target.detect_target import register_device_target_detector

    CALLS.append({"testdev_loaded": is_loaded("testdev")})
    tvm_ffi.register_global_func("tvm_foo.echo", lambda x: x, override=True)
    register_device_target_detector("ext_dev", _detect_ext_dev)
