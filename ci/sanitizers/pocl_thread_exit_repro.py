"""Reproduces, without any tvm code, the one sanitizer report `nox -s sanitize` lists as outside
this repository: a Python thread that creates a PoCL OpenCL context makes ASan fail an internal
CHECK ("unable to unmap", "failed to deallocate 0x134c0 bytes") when that thread exits.

    LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so) \
        python ci/sanitizers/pocl_thread_exit_repro.py

Intermittent: about one run in three here (Debian 12, PoCL 3.1, clang 14 and 15).  A CHECK is
not a report that a suppressions file can match, so ci/sanitized_tests.py recognises it by its
text (KNOWN_EXTERNAL) and leaves out the tests whose child processes it ends.
"""

import ctypes
import threading

CL_DEVICE_TYPE_ALL = 0xFFFFFFFF


def create_context() -> None:
    cl = ctypes.CDLL("libOpenCL.so.1")
    platform, device = ctypes.c_void_p(), ctypes.c_void_p()
    count, err = ctypes.c_uint(0), ctypes.c_int(0)
    cl.clGetPlatformIDs(1, ctypes.byref(platform), ctypes.byref(count))
    cl.clGetDeviceIDs(
        platform, ctypes.c_uint64(CL_DEVICE_TYPE_ALL), 1, ctypes.byref(device), ctypes.byref(count)
    )
    cl.clCreateContext.restype = ctypes.c_void_p
    context = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
    print("context", hex(context or 0), "error", err.value)


thread = threading.Thread(target=create_context)
thread.start()
thread.join()
