"""Tensor-parallel models compiled by apache-tvm 0.27 (tests/artifacts/disco) on Disco sessions
of every kind, with 2 and 4 workers: their collectives are the worker-side runtime.disco.* calls
0.27 lowers R.ccl.* / nn.op.ccl_* to, answered by the cpu collective library; results against
numpy, and the 2-shard decoder (paged KV cache, heads split between the workers, weights through
runtime.disco.ShardLoader) generating the same tokens as apache-tvm's run of the unsharded one."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi
from disco_support import (
    COLLECTIVES,
    DECODER,
    DECODER_TP2,
    KINDS,
    SessionPool,
    data,
    decoder_reference,
    greedy_decode,
    load_decoder_params,
    on_every_worker,
    put,
    shape,
)

import tvm

SIZES = (2, 4)


@pytest.fixture(scope="module")
def pool():
    sessions = SessionPool()
    yield sessions
    sessions.close()


@pytest.fixture(scope="module")
def expected():
    return data()


@pytest.fixture(params=[(k, n) for k in KINDS for n in SIZES], ids=lambda p: f"{p[0]}-{p[1]}")
def sess(request, pool):
    return pool.get(*request.param)


def collectives(sess):
    """The collectives library, loaded once per session."""
    if not hasattr(sess, "_test_collectives"):
        sess._test_collectives = sess.load_vm_module(str(COLLECTIVES))
    return sess._test_collectives


def test_tensor_parallel_mlp(sess, expected):
    """broadcast_from_worker0 -> column-parallel matmul -> row-parallel matmul -> allreduce."""
    n = sess.num_workers
    mod = collectives(sess)
    w1 = sess.scatter(np.stack(np.split(expected["mlp_w1"], n, axis=1)))
    w2 = sess.scatter(np.stack(np.split(expected["mlp_w2"], n, axis=0)))
    # Only worker 0's input counts: the model broadcasts it first.
    x = put(sess, [expected["mlp_x"]] + [np.zeros_like(expected["mlp_x"])] * (n - 1))
    y = mod["mlp_tp"](x, w1, w2)
    for got in on_every_worker(sess, y):
        np.testing.assert_allclose(got, expected["mlp_y"], rtol=1e-5, atol=1e-5)


def test_allgather_and_scatter_variants(sess, expected):
    n = sess.num_workers
    mod = collectives(sess)
    xa = expected[f"allgather_x_{n}"]
    y = mod[f"allgather_{n}"](
        sess.scatter(xa.reshape(n, -1, xa.shape[1])), sess.broadcast(expected["allgather_w"])
    )
    for got in on_every_worker(sess, y):
        np.testing.assert_allclose(got, expected[f"allgather_y_{n}"], rtol=1e-5, atol=1e-5)
    xs = expected[f"scatter_x_{n}"]
    s = mod[f"scatter_{n}"](put(sess, [xs] + [np.zeros_like(xs)] * (n - 1)))
    for w, got in enumerate(on_every_worker(sess, s)):
        np.testing.assert_array_equal(got, expected[f"scatter_y_{n}"][w])


def test_every_reduce_kind(sess, expected):
    n = sess.num_workers
    mod = collectives(sess)
    out = mod["reduce_kinds"](put(sess, list(expected["reduce_x"][:n])))
    get = sess.get_global_func("ffi.ArrayGetItem")
    for i, kind in enumerate(("sum", "prod", "min", "max", "avg")):
        for got in on_every_worker(sess, get(out, i)):
            np.testing.assert_allclose(got, expected[f"reduce_{kind}_{n}"], rtol=1e-6, err_msg=kind)
    ints = mod["reduce_int32"](put(sess, list(expected["reduce_xi"][:n])))
    for i, kind in enumerate(("sum", "max", "avg")):
        for got in on_every_worker(sess, get(ints, i)):
            np.testing.assert_array_equal(got, expected[f"reduce_int32_{kind}_{n}"], err_msg=kind)
    halves = mod["reduce_float16"](put(sess, list(expected["reduce_xh"][:n])))
    for got in on_every_worker(sess, halves):
        np.testing.assert_array_equal(got, expected[f"reduce_float16_sum_{n}"])


@pytest.mark.parametrize("kind", KINDS)
def test_two_groups_with_a_pipeline_stage(pool, expected, kind):
    """4 workers in 2 groups: group 0 runs stage 0 (tensor-parallel, in-group allreduce) and
    sends its result to group 1 (send_to_next_group), which receives it (recv_from_prev_group)
    and runs stage 1.  The compiled function picks its stage from runtime.disco.worker_id."""
    sess = pool.get(kind, 4, 2)
    mod = collectives(sess)
    wa = [np.split(expected["pipe_wa0"], 2, axis=1), np.split(expected["pipe_wa1"], 2, axis=1)]
    wb = [np.split(expected["pipe_wb0"], 2, axis=0), np.split(expected["pipe_wb1"], 2, axis=0)]
    a = put(sess, [wa[w // 2][w % 2] for w in range(4)])
    b = put(sess, [wb[w // 2][w % 2] for w in range(4)])
    x = sess.broadcast(expected["pipe_x"], in_group=False)
    y = mod["pipeline"](x, a, b, shape(2))
    got = on_every_worker(sess, y)
    for w in range(4):
        want = expected["pipe_y0"] if w < 2 else expected["pipe_y1"]
        np.testing.assert_allclose(got[w], want, rtol=1e-4, atol=1e-5, err_msg=f"worker {w}")


def test_pipeline_with_groups_of_one(pool, expected):
    sess = pool.get("threaded", 2, 2)
    mod = collectives(sess)
    a = put(sess, [expected["pipe_wa0"], expected["pipe_wa1"]])
    b = put(sess, [expected["pipe_wb0"], expected["pipe_wb1"]])
    y = mod["pipeline"](sess.broadcast(expected["pipe_x"], in_group=False), a, b, shape(1))
    got = on_every_worker(sess, y)
    np.testing.assert_allclose(got[0], expected["pipe_y0"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], expected["pipe_y1"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_two_shard_decoder_generates_the_unsharded_tokens(pool, kind):
    """The decoder split over 2 workers (attention heads and MLP columns; an allreduce after each
    output projection) generates the tokens apache-tvm 0.27 generated with the unsharded model;
    its weights are scattered from worker 0 by the model's own shard functions (ShardLoader)."""
    _, ref = decoder_reference()
    sess = pool.get(kind, 2)
    mod = sess.load_vm_module(str(DECODER_TP2))
    params = load_decoder_params(sess, mod, presharded=False)
    tokens, logits = greedy_decode(
        sess, DECODER_TP2, params, ref["prompt"].tolist(), len(ref["greedy_tokens"]), mod
    )
    assert tokens == ref["greedy_tokens"].tolist()
    np.testing.assert_allclose(logits, ref["greedy_logits"], rtol=1e-3, atol=1e-4)


def test_presharded_weights_and_the_unsharded_decoder(pool):
    """ShardLoaderLoadAllPresharded reads each worker's own slices; and the unsharded decoder on
    one worker (the reference of the decode benchmark) generates the same tokens too."""
    _, ref = decoder_reference()
    sess = pool.get("threaded", 2)
    mod = sess.load_vm_module(str(DECODER_TP2))
    params = load_decoder_params(sess, mod, presharded=True)
    tokens, _ = greedy_decode(
        sess, DECODER_TP2, params, ref["prompt"].tolist(), len(ref["greedy_tokens"]), mod
    )
    assert tokens == ref["greedy_tokens"].tolist()

    single = pool.get("threaded", 1)
    full = single.load_vm_module(str(DECODER))
    loader = single.get_global_func("runtime.disco.ShardLoader")
    from disco_support import WEIGHTS

    params = single.get_global_func("runtime.disco.ShardLoaderLoadAll")(
        loader(str(WEIGHTS / "tensor-cache.json"), (WEIGHTS / "tensor-cache.json").read_text(), "", full)
    )
    tokens, _ = greedy_decode(
        single, DECODER, params, ref["prompt"].tolist(), len(ref["greedy_tokens"]), full
    )
    assert tokens == ref["greedy_tokens"].tolist()


def test_presharded_weights_need_the_matching_worker_count(pool):
    from disco_support import WEIGHTS_PRESHARDED

    sess = pool.get("threaded", 4)
    loader = sess.get_global_func("runtime.disco.ShardLoader")(
        str(WEIGHTS_PRESHARDED), (WEIGHTS_PRESHARDED / "tensor-cache.json").read_text(), "", None
    )
    sess.get_global_func("runtime.disco.ShardLoaderLoadPresharded")(loader, tvm_ffi.Shape([0]))
    from tvm.backend.extra import disco

    with pytest.raises(disco.DiscoError, match="is shard 1 of 2, but worker 0 of 4 loads it"):
        sess._sync_all()


def test_a_model_without_collectives_runs_on_one_vm():
    """The collectives library loads into a plain VirtualMachine (every runtime.disco.* function
    it names exists, as in apache-tvm); a collective called outside a session says why it fails."""
    vm = tvm.runtime.vm.VirtualMachine(tvm.runtime.load_module(str(COLLECTIVES)), tvm.cpu())
    x = tvm.runtime.tensor(np.ones(6, "float32"))
    with pytest.raises(RuntimeError, match="can only run on a Disco worker"):
        vm["reduce_float16"](tvm.runtime.tensor(np.ones(6, "float16")))
    assert x.numpy().sum() == 6
