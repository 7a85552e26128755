"""Disco's rccl collectives (runtime.disco.rccl.* in tvm-runtime-rocm) without a GPU: the fake
HIP runtime for the devices, the fake NCCL built as librccl (RCCL keeps NCCL's API).  See
tests/nccl_fake_support.py for what is checked."""

from __future__ import annotations

import json

import pytest
from nccl_fake_support import (
    HELPERS,
    check_fake_collectives,
    fake_env,
    init_error,
    run_fake_collectives,
)

from conftest import pythonpath, run_python

ROCM = 10


@pytest.mark.parametrize(("n", "groups"), [(2, 1), (4, 2)])
def test_collectives_through_rccl(n, groups):
    r = run_fake_collectives("rccl", n, groups, fake_env("rccl", n))
    check_fake_collectives(r, n, groups, ROCM)


def test_missing_rccl_says_where_it_looked():
    out = init_error("rccl", fake_env("rccl", 2, TVM_RCCL_LIBRARY="/nonexistent/librccl.so.1"))
    assert "ERROR RuntimeError" in out and "RCCL (librccl.so.1) could not be opened" in out, out
    assert "TVM_RCCL_LIBRARY" in out, out


GROUP_SCRIPT = """
import ctypes, json, os
import numpy as np
from tvm.backend.extra import disco
fake = ctypes.CDLL(os.environ["FAKE_NCCL_PATH"])
fake.fake_nccl_log.restype = ctypes.c_char_p
fake.fake_nccl_open_groups.restype = ctypes.c_long
sess = disco.ThreadedSession(2)
sess.import_python_module("disco_helpers")
sess.init_ccl("rccl", 0, 1)
x, z = sess.empty((8,), "float32"), sess.empty((8,), "float32")
try:
    sess.call_packed(sess.get_global_func("testing.disco.exchange"), x, z)
    sess._sync_all()
    error = None
except Exception as err:
    error = f"{type(err).__name__}: {err}"
print("RESULT:" + json.dumps({"error": error, "open_groups": fake.fake_nccl_open_groups(),
                             "log": fake.fake_nccl_log().decode()}))
os._exit(0)  # the session may be broken by the failure; the fakes' state is what is checked
"""


def test_failed_send_still_ends_the_group():
    """A send that fails inside send_to_worker's ncclGroupStart/End must not leave the worker's
    thread in the group (NCCL would hold back every later collective of that worker)."""

    env = fake_env("rccl", 2, FAKE_NCCL_FAIL_SENDS="1", FAKE_NCCL_WAIT_S="2", PYTHONPATH=pythonpath(HELPERS))
    proc = run_python(GROUP_SCRIPT, env=env)
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    r = json.loads(line[len("RESULT:") :])
    assert "error send rank=0 peer=1 injected_failure" in r["log"], r["log"]
    assert r["error"] and "ncclSend failed: internal error" in r["error"], r["error"]
    assert r["open_groups"] == 0, r["log"]


ASYNC_SCRIPT = """
import ctypes, json, os
import numpy as np
import tvm_ffi
from tvm.backend.extra import disco
hip = ctypes.CDLL(os.environ["TVM_ROCM_LIBRARY"])

def peek(t):
    # The worker's view of t's device memory (host memory on the fake) without any sync.
    value = ctypes.c_float.from_address(t.data_ptr()).value
    return tvm_ffi.Shape([hip.fake_hip_pending_ops(), int(value)])

tvm_ffi.register_global_func("testing.rccl.peek", peek, override=True)
sess = disco.ThreadedSession(2)
sess.init_ccl("rccl", 0, 1)
x, y = sess.empty((4,), "float32"), sess.empty((4,), "float32")
for w in range(2):
    x.debug_copy_from(w, np.full(4, w + 2, "float32"))
    y.debug_copy_from(w, np.zeros(4, "float32"))
sess.allreduce(x, y, "sum", in_group=False)
peek_fn = sess.get_global_func("testing.rccl.peek")
before = list(sess.call_packed(peek_fn, y).debug_get_from_remote(0))
sess._sync_all()
after = list(sess.call_packed(peek_fn, y).debug_get_from_remote(0))
got = y.debug_get_from_remote(1).numpy().tolist()
sess.shutdown()
print("RESULT:" + json.dumps({"before": before, "after": after, "got": got}))
"""


def test_collective_results_land_at_the_stream_sync():
    """On the fake HIP, the fake RCCL writes a collective's result through the stream's queue:
    it is in device memory only after the stream is synchronized, as on a GPU."""
    proc = run_python(ASYNC_SCRIPT, env=fake_env("rccl", 2))
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    r = json.loads(line[len("RESULT:") :])
    pending, value = r["before"]
    assert pending >= 1 and value == 0, r  # queued: y still holds its zeros
    assert r["after"] == [0, 5], r  # 2 + 3 after sync_worker
    assert r["got"] == [5.0] * 4


def test_fake_nccl_refuses_collectives_inside_an_unended_group():
    """What the group test above relies on, on the fake alone: a send it fails on purpose, a
    group left open on the thread (counted by fake_nccl_open_groups) and a collective issued in
    it refused (NCCL would hold it back for good), until ncclGroupEnd."""
    proc = run_python(
        """
        import ctypes, json, os
        nccl = ctypes.CDLL(os.environ["FAKE_NCCL_PATH"])
        nccl.fake_nccl_open_groups.restype = ctypes.c_long
        class UniqueId(ctypes.Structure):
            _fields_ = [("internal", ctypes.c_char * 128)]
        uid, comm = UniqueId(), ctypes.c_void_p()
        assert nccl.ncclGetUniqueId(ctypes.byref(uid)) == 0
        assert nccl.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0) == 0
        buf = (ctypes.c_float * 4)(1, 2, 3, 4)
        codes = {"start": nccl.ncclGroupStart(),
                 "send": nccl.ncclSend(buf, 4, 7, 0, comm, None),
                 "open": nccl.fake_nccl_open_groups(),
                 "allreduce_in_group": nccl.ncclAllReduce(buf, buf, 4, 7, 0, comm, None),
                 "end": nccl.ncclGroupEnd()}
        codes.update(closed=nccl.fake_nccl_open_groups(),
                     allreduce=nccl.ncclAllReduce(buf, buf, 4, 7, 0, comm, None))
        print("RESULT:" + json.dumps(codes))
        """,
        env={"FAKE_NCCL_PATH": fake_env("rccl", 2)["FAKE_NCCL_PATH"], "FAKE_NCCL_FAIL_SENDS": "1"},
    )
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    assert json.loads(line[len("RESULT:") :]) == {
        "start": 0,
        "send": 3,  # ncclInternalError, injected
        "open": 1,
        "allreduce_in_group": 5,  # ncclInvalidUsage
        "end": 0,
        "closed": 0,
        "allreduce": 0,
    }
