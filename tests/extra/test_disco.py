"""Disco on CPU workers: threaded, process and socket sessions (two workers each) hold DRefs, run
call_packed, copy to and from worker 0, run a Relax VM model on every worker and do collectives
checked against numpy; a failing or dying worker ends the session with an error, never a hang."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tvm
from conftest import ARTIFACTS, case
from tvm.backend.extra import disco

HERE = str(Path(__file__).resolve().parent)


def make_session(kind: str, num_workers: int = 2, num_groups: int = 1) -> disco.Session:
    if kind == "threaded":
        return disco.ThreadedSession(num_workers, num_groups)
    if kind == "process":
        return disco.ProcessSession(num_workers, num_groups)
    # Two "nodes" on this machine: worker 0 here, worker 1 in a node process over TCP.
    return disco.SocketSession(2, num_workers // 2, num_groups, launch_local_nodes=True, connect_timeout_s=60)


def _open(kind: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
    s = make_session(kind)
    s.import_python_module("disco_helpers")
    s.kind = kind
    return s


@pytest.fixture(params=["threaded", "process", "socket"])
def sess(request, monkeypatch):
    s = _open(request.param, monkeypatch)
    yield s
    s.shutdown()


# Sessions whose workers are processes of their own, so one of them can die alone (a thread
# worker cannot; its errors are covered by the test of failing worker functions).
@pytest.fixture(params=["process", "socket"])
def process_sess(request, monkeypatch):
    s = _open(request.param, monkeypatch)
    yield s
    s.shutdown()


def put(sess, values: list[np.ndarray]) -> disco.DRef:
    """A DRef holding values[i] on worker i."""
    ref = sess.empty(values[0].shape, str(values[0].dtype))
    for i, v in enumerate(values):
        ref.debug_copy_from(i, v)
    return ref


def on_every_worker(sess, ref: disco.DRef) -> list[np.ndarray]:
    return [ref.debug_get_from_remote(i).numpy() for i in range(sess.num_workers)]


def test_worker_ids_and_call_packed_with_dref_arguments(sess):
    ids = sess.get_global_func("runtime.disco.worker_id")()
    assert [ids.debug_get_from_remote(i) for i in range(2)] == [0, 1]
    x = put(sess, [np.arange(4, dtype="float32"), np.ones(4, "float32")])
    y = sess.call_packed(sess.get_global_func("testing.extra.disco_scaled"), x, 3.0)
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


def test_vm_model_runs_on_every_worker(sess):
    mlp = case("cpu", "mlp")
    (call,) = mlp["calls"]
    data = np.load(ARTIFACTS / call["npz"])
    mod = sess.load_vm_module(str(ARTIFACTS / mlp["file"]))
    out = mod["main"](*[sess.broadcast(data[a["key"]]) for a in call["args"]])
    for got in on_every_worker(sess, out):
        np.testing.assert_allclose(got, data["y"], rtol=mlp["rtol"], atol=mlp["atol"])


def test_collectives_match_numpy(sess):
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal((4, 6)).astype("float32") for _ in range(2)]
    src = put(sess, parts)
    dst = sess.empty((4, 6), "float32")
    for op, ref in (("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod), ("avg", np.mean)):
        sess.allreduce(src, dst, op=op)
        for got in on_every_worker(sess, dst):
            np.testing.assert_allclose(got, ref(np.stack(parts), axis=0), rtol=1e-6, err_msg=op)

    gathered = sess.empty((8, 6), "float32")
    sess.allgather(src, gathered)
    for got in on_every_worker(sess, gathered):
        np.testing.assert_array_equal(got, np.concatenate(parts))

    sess.broadcast_from_worker0(src, dst)
    for got in on_every_worker(sess, dst):
        np.testing.assert_array_equal(got, parts[0])

    whole = np.arange(12, dtype="int32").reshape(4, 3)
    piece = sess.scatter(whole)
    np.testing.assert_array_equal(piece.debug_get_from_remote(0).numpy(), whole[:2])
    np.testing.assert_array_equal(piece.debug_get_from_remote(1).numpy(), whole[2:])
    at0 = sess.empty((4, 3), "int32", worker0_only=True)
    sess.gather_to_worker0(piece, at0)
    np.testing.assert_array_equal(at0.debug_get_from_remote(0).numpy(), whole)


def test_failing_worker_ends_the_session_with_an_error(sess):
    x = put(sess, [np.ones(4, "float32")] * 2)
    y = sess.call_packed(sess.get_global_func("testing.extra.disco_fail_on_1"), x)
    with pytest.raises(disco.DiscoError, match="Disco worker 1 failed: .*worker 1 is broken on purpose"):
        sess.allreduce(y, sess.empty((4,), "float32"))
    with pytest.raises(disco.DiscoError, match="worker 1 failed"):
        sess.empty((1,), "float32")


def test_dying_worker_process_ends_the_session(process_sess):
    sess = process_sess
    x = put(sess, [np.ones(4, "float32")] * 2)
    sess.call_packed(sess.get_global_func("testing.extra.disco_exit_on_1"), x)
    with pytest.raises(disco.DiscoError, match="Disco worker 1 failed: it exited"):
        sess.allreduce(x, sess.empty((4,), "float32"))
    with pytest.raises(disco.DiscoError, match="worker 1 failed"):
        sess.sync_worker_0()


def test_missing_function_is_reported_at_the_next_wait(sess):
    sess.get_global_func("testing.extra.no_such_function")
    with pytest.raises(disco.DiscoError, match="no_such_function"):
        sess._sync_all()


def test_groups_reduce_separately():
    with disco.ThreadedSession(4, num_groups=2) as s:
        src = put(s, [np.full(3, i + 1, "float32") for i in range(4)])
        dst = s.empty((3,), "float32")
        s.allreduce(src, dst, "sum", in_group=True)
        assert [g[0] for g in on_every_worker(s, dst)] == [3.0, 3.0, 7.0, 7.0]
        s.allreduce(src, dst, "sum", in_group=False)
        assert [g[0] for g in on_every_worker(s, dst)] == [10.0] * 4


def test_bad_arguments_and_closed_sessions():
    with pytest.raises(ValueError, match="num_groups=3 must divide num_workers=2"):
        disco.ThreadedSession(2, num_groups=3)
    with disco.ThreadedSession(1) as single, pytest.raises(NotImplementedError, match="CPU workers"):
        single.init_ccl("nccl", 0)
    s = disco.ThreadedSession(2)
    s.shutdown()
    with pytest.raises(disco.DiscoError, match="shut down"):
        s.get_global_func("runtime.disco.worker_id")


def test_socket_session_reports_workers_that_never_connect():
    with pytest.raises(disco.DiscoError, match="1 of 1 remote workers did not connect"):
        disco.SocketSession(2, 1, connect_timeout_s=1)
