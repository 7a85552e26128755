"""Disco sessions on CPU workers (threads, processes, and sockets between two "machines"): the
session API of apache-tvm 0.27 (DRefs, call_packed, copies to and from worker 0, collectives),
worker-side collectives exchanging data among the workers through the cpu collective library,
and failures that end the session with a DiscoError naming the worker, never a hang.

Compiled models and the tensor-parallel decoder are in test_disco_models.py."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
import tvm_ffi
from disco_support import KINDS, SessionPool, on_every_worker, open_session, put

import tvm
from tvm.backend.extra import disco


@pytest.fixture(scope="module")
def pool():
    sessions = SessionPool()
    yield sessions
    sessions.close()


@pytest.fixture(params=KINDS)
def sess(request, pool):
    return pool.get(request.param, 2)


def test_worker_identity_like_apache_tvm(sess):
    ids = sess.get_global_func("runtime.disco.worker_id")()
    ranks = sess.get_global_func("runtime.disco.worker_rank")()
    size = sess.get_global_func("runtime.disco.world_size")()
    dev = sess.get_global_func("runtime.disco.device")()
    for w in range(2):
        got = ids.debug_get_from_remote(w)
        assert isinstance(got, tvm_ffi.Shape) and list(got) == [w]  # a Shape, for match_cast
        assert ranks.debug_get_from_remote(w) == w
        assert size.debug_get_from_remote(w) == 2
        assert dev.debug_get_from_remote(w) == tvm.cpu(0)


def test_call_packed_with_dref_arguments(sess):
    x = put(sess, [np.arange(4, dtype="float32"), np.ones(4, "float32")])
    y = sess.call_packed(sess.get_global_func("testing.disco.scaled"), x, 3.0)
    got = on_every_worker(sess, y)
    np.testing.assert_array_equal(got[0], np.arange(4) * 3.0)
    np.testing.assert_array_equal(got[1], np.full(4, 3.0))


def test_copy_to_and_from_worker_0(sess):
    host = np.random.default_rng(0).standard_normal((3, 5)).astype("float32")
    remote = sess.copy_to_worker_0(tvm.runtime.tensor(host))
    assert remote.debug_get_from_remote(1) is None  # allocated on worker 0 only
    back = tvm.runtime.empty((3, 5), "float32")
    sess.copy_from_worker_0(back, remote)
    np.testing.assert_array_equal(back.numpy(), host)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "bfloat16", "float64", "int64", "uint8"])
def test_allreduce_every_kind_and_dtype_matches_numpy(sess, dtype):
    rng = np.random.default_rng(1)
    # Values whose sums and products are exact in every dtype, so the order of reduction is moot.
    parts = [rng.integers(1, 4, (3, 5)).astype("float32" if dtype == "bfloat16" else dtype) for _ in range(2)]
    src = put(sess, parts)
    if dtype == "bfloat16":  # numpy has no bfloat16: the workers convert
        src = sess.get_global_func("testing.disco.to_bfloat16")(src)
    dst = sess.empty((3, 5), dtype)
    stacked = np.stack(parts).astype("float64")
    for op, ref in (("sum", np.sum), ("prod", np.prod), ("min", np.min), ("max", np.max), ("avg", np.mean)):
        sess.allreduce(src, dst, op=op)
        out = sess.get_global_func("testing.disco.from_bfloat16")(dst) if dtype == "bfloat16" else dst
        want = ref(stacked, axis=0)
        if np.dtype(parts[0].dtype).kind in "iu":
            want = np.trunc(want)  # an integer average rounds toward zero, as NCCL's does
        for got in on_every_worker(sess, out):
            np.testing.assert_array_equal(got.astype("float64"), want, err_msg=f"{op} {dtype}")


def test_collectives_match_numpy(sess):
    rng = np.random.default_rng(2)
    parts = [rng.standard_normal((4, 6)).astype("float32") for _ in range(2)]
    src = put(sess, parts)
    gathered = sess.empty((8, 6), "float32")
    sess.allgather(src, gathered)
    for got in on_every_worker(sess, gathered):
        np.testing.assert_array_equal(got, np.concatenate(parts))

    dst = sess.empty((4, 6), "float32")
    sess.broadcast_from_worker0(src, dst)
    for got in on_every_worker(sess, dst):
        np.testing.assert_array_equal(got, parts[0])

    # apache-tvm's scatter: the first dimension is the number of workers, shape[1:] per worker.
    whole = np.arange(24, dtype="int32").reshape(2, 3, 4)
    piece = sess.scatter(whole)
    for w, got in enumerate(on_every_worker(sess, piece)):
        np.testing.assert_array_equal(got, whole[w])
    at0 = sess.empty((2, 3, 4), "int32", worker0_only=True)
    sess.gather_to_worker0(piece, at0)
    np.testing.assert_array_equal(at0.debug_get_from_remote(0).numpy(), whole)
    assert at0.debug_get_from_remote(1) is None

    copies = sess.broadcast(np.full((2, 2), 7, "int64"))
    for got in on_every_worker(sess, copies):
        np.testing.assert_array_equal(got, np.full((2, 2), 7))


def test_point_to_point(sess):
    x = put(sess, [np.arange(5, dtype="float32"), np.zeros(5, "float32")])
    y = sess.empty((5,), "float32")
    y.debug_copy_from(1, np.zeros(5, "float32"))
    sess.call_packed(sess.get_global_func("testing.disco.exchange"), x, y)
    np.testing.assert_array_equal(y.debug_get_from_remote(1).numpy(), np.arange(5))


def test_buffers_larger_than_the_staging_slots(sess):
    """16 MB: several rounds of the shared-memory slots (threads, processes), one ring pass
    over TCP (sockets); every element lands where it belongs."""
    n = 4 << 20
    ramp = sess.get_global_func("testing.disco.ramp")(n)  # worker w: arange(n) * (w + 1)
    dst = sess.empty((n,), "float32")
    sess.allreduce(ramp, dst, "sum")
    np.testing.assert_array_equal(dst.debug_get_from_remote(1).numpy(), np.arange(n, dtype="float32") * 3)
    sess.allreduce(ramp, dst, "max")
    np.testing.assert_array_equal(dst.debug_get_from_remote(0).numpy(), np.arange(n, dtype="float32") * 2)


def test_scatter_needs_one_entry_per_worker(sess):
    with pytest.raises(ValueError, match="first dimension of the array must be the number of workers"):
        sess.scatter(np.zeros((3, 2), "float32"))


def test_four_workers_and_groups(pool):
    s = pool.get("threaded", 4, 2)
    src = put(s, [np.full(3, i + 1, "float32") for i in range(4)])
    dst = s.empty((3,), "float32")
    s.allreduce(src, dst, "sum", in_group=True)
    assert [g[0] for g in on_every_worker(s, dst)] == [3.0, 3.0, 7.0, 7.0]
    s.allreduce(src, dst, "sum", in_group=False)
    assert [g[0] for g in on_every_worker(s, dst)] == [10.0] * 4
    s.broadcast_from_worker0(src, dst, in_group=True)
    assert [g[0] for g in on_every_worker(s, dst)] == [1.0, 1.0, 3.0, 3.0]
    first = s.empty((3,), "float32", worker0_only=True)  # the first worker of each group
    assert [first.debug_get_from_remote(w) is None for w in range(4)] == [False, True, False, True]
    first = s.empty((3,), "float32", worker0_only=True, in_group=False)
    assert [first.debug_get_from_remote(w) is None for w in range(4)] == [False, True, True, True]


def test_bind_worker_to_cpu_core():
    allowed = sorted(os.sched_getaffinity(0))
    cpus = [allowed[0], allowed[-1]]
    with open_session("threaded", 2) as s:
        s.get_global_func("runtime.disco.bind_worker_to_cpu_core")(tvm_ffi.Shape(cpus))
        got = s.get_global_func("testing.disco.affinity")()
        assert [list(got.debug_get_from_remote(w)) for w in range(2)] == [[cpus[0]], [cpus[1]]]


def test_missing_function_is_reported_at_the_next_wait():
    s = disco.ThreadedSession(2)
    s.get_global_func("testing.disco.no_such_function")
    with pytest.raises(disco.DiscoError, match="Disco worker 0 failed: .*no_such_function"):
        s._sync_all()
    with pytest.raises(disco.DiscoError, match="no_such_function"):
        s.empty((1,), "float32")  # the session stays failed


@pytest.mark.parametrize("kind", KINDS)
def test_failing_worker_ends_the_session_naming_it(kind):
    """Worker 1 fails before a collective worker 0 is already blocked in: worker 0 is released
    (worker 1 aborts its collectives) and the error names worker 1 and its reason."""
    s = open_session(kind, 2)
    try:
        x = put(s, [np.ones(4, "float32")] * 2)
        y = s.call_packed(s.get_global_func("testing.disco.fail_on_1"), x)
        s.allreduce(y, s.empty((4,), "float32"))
        with pytest.raises(disco.DiscoError, match="Disco worker 1 failed: .*worker 1 is broken on purpose"):
            s._sync_all()
        with pytest.raises(disco.DiscoError, match="worker 1 failed"):
            s.empty((1,), "float32")
    finally:
        s.shutdown()


@pytest.mark.parametrize("kind", ["process", "socket"])
def test_worker_killed_mid_collective_is_named_never_a_hang(kind):
    """Worker 1 waits inside an allreduce that worker 0 joins late; worker 1 is killed meanwhile.
    Worker 0 finds it gone (shared memory: its robust mutex; TCP: the connection closes) and the
    session ends with an error naming worker 1."""
    s = open_session(kind, 2)
    try:
        pid = s.get_global_func("testing.disco.pid")().debug_get_from_remote(1)
        assert pid != os.getpid()
        x = put(s, [np.ones(8, "float32")] * 2)
        s.call_packed(
            s.get_global_func("testing.disco.delayed_allreduce"), x, s.empty((8,), "float32"), 0, 1.5
        )
        time.sleep(0.7)  # worker 1 is now blocked in the allreduce
        os.kill(pid, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(disco.DiscoError, match="Disco worker 1 failed: .*exited"):
            s._sync_all()
        assert time.monotonic() - start < 30
    finally:
        s.shutdown()


def test_bad_arguments_and_closed_sessions():
    with pytest.raises(ValueError, match="num_groups=3 must divide num_workers=2"):
        disco.ThreadedSession(2, num_groups=3)
    with disco.ThreadedSession(1) as single:
        with pytest.raises(ValueError, match="unknown collective library 'mpi'"):
            single.init_ccl("mpi")
        with pytest.raises(TypeError, match="cannot be passed to Disco workers"):
            single.call_packed(single.get_global_func("runtime.disco.worker_id"), object())
        with pytest.raises(ValueError, match="op must be one of"):
            single.allreduce(single.empty((1,), "float32"), single.empty((1,), "float32"), "mean")
        single.init_ccl("cpu")  # the default, set up again
    s = disco.ThreadedSession(2)
    s.shutdown()
    with pytest.raises(disco.DiscoError, match="shut down"):
        s.get_global_func("runtime.disco.worker_id")


def test_worker_side_functions_outside_a_worker_say_so():
    with pytest.raises(RuntimeError, match="can only run on a Disco worker"):
        tvm.get_global_func("runtime.disco.worker_id")()
    t = tvm.runtime.empty((2,), "float32")
    with pytest.raises(RuntimeError, match="can only run on a Disco worker"):
        tvm.get_global_func("runtime.disco.allreduce")(t, tvm_ffi.Shape([0]), True, t)


def test_socket_session_reports_nodes_that_never_connect():
    with pytest.raises(disco.DiscoError, match="1 of 1 remote workers did not connect"):
        disco.SocketSession(2, 1, connect_timeout_s=1)
