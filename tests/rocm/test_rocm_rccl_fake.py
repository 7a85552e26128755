"""Disco's rccl collectives (runtime.disco.rccl.* in tvm-runtime-rocm) without a GPU: the fake
HIP runtime for the devices, the fake NCCL built as librccl (RCCL keeps NCCL's API).  See
tests/nccl_fake_support.py for what is checked."""

from __future__ import annotations

import pytest
from nccl_fake_support import (
    build_fake_nccl,
    check_fake_collectives,
    fake_env,
    init_error,
    run_fake_collectives,
)
from rocm_support import build_fake_hip

ROCM = 10


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake-rccl")
    return str(build_fake_hip(d)), str(build_fake_nccl(d, "librccl_fake.so.1"))


def env_for(fakes, devices: int, **extra: str) -> dict[str, str]:
    return fake_env(*fakes, "TVM_ROCM_LIBRARY", "TVM_RCCL_LIBRARY", "FAKE_HIP_DEVICES", devices, **extra)


@pytest.mark.parametrize(("n", "groups"), [(2, 1), (4, 2)])
def test_collectives_through_rccl(fakes, n, groups):
    r = run_fake_collectives("rccl", n, groups, env_for(fakes, n))
    check_fake_collectives(r, n, groups, ROCM)


def test_missing_rccl_says_where_it_looked(fakes):
    out = init_error("rccl", env_for(fakes, 2, TVM_RCCL_LIBRARY="/nonexistent/librccl.so.1"))
    assert "ERROR RuntimeError" in out and "RCCL (librccl.so.1) could not be opened" in out, out
    assert "TVM_RCCL_LIBRARY" in out, out
