"""Disco's rccl collectives (runtime.disco.rccl.* in tvm-runtime-rocm) without a GPU: the fake
HIP runtime for the devices, the fake NCCL built as librccl (RCCL keeps NCCL's API).  See
tests/nccl_fake_support.py for what is checked."""

from __future__ import annotations

import pytest
from nccl_fake_support import build_fake_nccl, check_fake_collectives, run_fake_collectives
from rocm_support import build_fake_hip

from conftest import run_python

ROCM = 10


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake-rccl")
    return str(build_fake_hip(d)), str(build_fake_nccl(d, "librccl_fake.so.1"))


def env_for(fakes, devices: int, **extra: str) -> dict[str, str]:
    driver, rccl = fakes
    return {
        "TVM_ROCM_LIBRARY": driver,
        "FAKE_HIP_DEVICES": str(devices),
        "TVM_RCCL_LIBRARY": rccl,
        "FAKE_NCCL_PATH": rccl,
        "FAKE_NCCL_DEVICE_LIBRARY": driver,
        "FAKE_NCCL_DEVICE_SYMBOL": "fake_hip_current_device",
        **extra,
    }


@pytest.mark.parametrize(("n", "groups"), [(2, 1), (4, 2)])
def test_collectives_through_rccl(fakes, n, groups):
    r = run_fake_collectives("rccl", n, groups, env_for(fakes, n))
    check_fake_collectives(r, n, groups, ROCM)


def test_missing_rccl_says_where_it_looked(fakes):
    out = run_python(
        """
        from tvm.backend.extra import disco
        sess = disco.ThreadedSession(2)
        try:
            sess.init_ccl("rccl", 0, 1)
        except Exception as err:
            print("ERROR", type(err).__name__, err)
        sess.shutdown()
        """,
        env=env_for(fakes, 2, TVM_RCCL_LIBRARY="/nonexistent/librccl.so.1"),
    ).stdout
    assert "ERROR RuntimeError" in out and "RCCL (librccl.so.1) could not be opened" in out, out
    assert "TVM_RCCL_LIBRARY" in out, out
