"""Disco's nccl collectives (runtime.disco.nccl.* in tvm-runtime-cuda) without a GPU: the fake
CUDA driver for the devices, the fake NCCL (tests/fakes/fake_nccl.c) for the library.
See tests/nccl_fake_support.py for what is checked."""

from __future__ import annotations

import pytest
from nccl_fake_support import (
    check_fake_collectives,
    fake_env,
    init_error,
    run_fake_collectives,
)

import tvm.backend.cuda as hook

CUDA = 2


@pytest.mark.parametrize(("n", "groups"), [(2, 1), (4, 2)])
def test_collectives_through_nccl(n, groups):
    r = run_fake_collectives("nccl", n, groups, fake_env("nccl", n))
    check_fake_collectives(r, n, groups, CUDA)


def test_missing_nccl_names_the_wheel():
    out = init_error("nccl", fake_env("nccl", 2, TVM_NCCL_LIBRARY="/nonexistent/libnccl.so.2"))
    assert "ERROR RuntimeError" in out and "NCCL (libnccl.so.2) could not be opened" in out, out
    assert 'pip install "tvm-runtime-cuda[nccl]"' in out, out


def test_nccl_failure_ends_the_session():
    out = init_error("nccl", fake_env("nccl", 2, FAKE_NCCL_FAIL_INIT="5"))
    assert "ERROR DiscoError Disco worker" in out and "ncclCommInitRank failed: invalid usage" in out, out


def test_init_needs_a_device_per_worker():
    out = init_error("nccl", fake_env("nccl", 2), device_ids="0")
    assert "needs a device id for each of the 2 workers of a node" in out, out


def test_locator_finds_the_nccl_wheel_layout(tmp_path, monkeypatch):
    lib = tmp_path / "nvidia" / "nccl" / "lib"
    lib.mkdir(parents=True)
    (lib / "libnccl.so.2").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert str(lib / "libnccl.so.2") in hook.locate_nccl()
