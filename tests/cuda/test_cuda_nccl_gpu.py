"""Disco's nccl collectives on real NVIDIA GPUs (skipped without one): a ThreadedSession with a
worker per GPU (at most 4) joins NCCL, and the session's collectives (the worker-side
runtime.disco.* calls compiled models make) produce numpy's results on the GPUs."""

from __future__ import annotations

import os

import numpy as np
import pytest
from cuda_support import cuda_device

import tvm
from tvm.backend.extra import disco


def gpus_with_nccl() -> int:
    cuda_device(tvm)  # skips without a GPU
    count = 0
    while count < 4 and tvm.cuda(count).exist:
        count += 1
    try:
        tvm.get_global_func("runtime.disco.nccl.get_unique_id")()
    except RuntimeError as err:
        if os.environ.get("TVM_TEST_REQUIRE_NCCL") == "1":
            pytest.fail(f"TVM_TEST_REQUIRE_NCCL=1 but NCCL is unusable: {err}")
        pytest.skip(f'NCCL is not installed (pip install "tvm-runtime-cuda[nccl]"): {err}')
    return count


def test_nccl_collectives_on_gpus():
    n = gpus_with_nccl()
    with disco.ThreadedSession(n) as sess:
        sess.init_ccl("nccl", *range(n))
        dev = sess.get_global_func("runtime.disco.device")()
        assert [dev.debug_get_from_remote(w) for w in range(n)] == [tvm.cuda(w) for w in range(n)]
        rng = np.random.default_rng(3)
        parts = [rng.integers(1, 5, (64, 33)).astype("float32") for _ in range(n)]
        x = sess.empty((64, 33), "float32")
        for w, p in enumerate(parts):
            x.debug_copy_from(w, p)
        y = sess.empty((64, 33), "float32")
        for op, ref in (("sum", np.sum), ("max", np.max), ("min", np.min), ("avg", np.mean)):
            sess.allreduce(x, y, op)
            for w in range(n):
                np.testing.assert_allclose(
                    y.debug_get_from_remote(w).numpy(), ref(np.stack(parts), 0), err_msg=op
                )
        g = sess.empty((64 * n, 33), "float32")
        sess.allgather(x, g)
        np.testing.assert_array_equal(g.debug_get_from_remote(n - 1).numpy(), np.concatenate(parts))
        sess.broadcast_from_worker0(x, y)
        np.testing.assert_array_equal(y.debug_get_from_remote(n - 1).numpy(), parts[0])
        whole = np.arange(n * 10, dtype="float32").reshape(n, 10)
        piece = sess.scatter(whole)
        np.testing.assert_array_equal(piece.debug_get_from_remote(n - 1).numpy(), whole[n - 1])
        sess._sync_all()
