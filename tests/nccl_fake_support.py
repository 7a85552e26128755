"""Disco's GPU collectives (runtime.disco.nccl.* of the CUDA wheel, runtime.disco.rccl.* of the
ROCm wheel) against the fake NCCL of tests/fakes/fake_nccl.c, on the fake CUDA or HIP
driver: a ThreadedSession whose workers really exchange data (fake device memory is host
memory), checked against numpy, with every NCCL call checked and recorded by the fake.
"""

from __future__ import annotations

import textwrap
from typing import Any

import fakes
from fakes import parse_log

from conftest import REPO, child_result, pythonpath, run_python

HELPERS = REPO / "tests" / "extra"


SCRIPT = """
import ctypes, json, os, sys
import numpy as np
import tvm, tvm_ffi
from tvm.backend.extra import disco

CCL, N, G = {ccl!r}, {n}, {groups}
fake = ctypes.CDLL(os.environ["FAKE_NCCL_PATH"])
fake.fake_nccl_log.restype = ctypes.c_char_p
fake.fake_nccl_live_comms.restype = ctypes.c_long
rng = np.random.default_rng(5)
parts = [rng.integers(1, 5, (3, 4)).astype("float32") for _ in range(N)]
out = {{}}
sess = disco.ThreadedSession(N, G)
sess.import_python_module("disco_helpers")
sess.init_ccl(CCL, *range(N))
dev = sess.get_global_func("runtime.disco.device")()
out["devices"] = [
    [int(d.dlpack_device_type()), d.index] for d in (dev.debug_get_from_remote(w) for w in range(N))
]
def put(values):
    ref = sess.empty(values[0].shape, str(values[0].dtype))
    for w, v in enumerate(values):
        ref.debug_copy_from(w, v)
    return ref
def every(ref):
    return [ref.debug_get_from_remote(w).numpy().tolist() for w in range(N)]
x, y = put(parts), sess.empty((3, 4), "float32")
for op in ("sum", "prod", "min", "max", "avg"):
    sess.allreduce(x, y, op, in_group=False)
    out[op] = every(y)
sess.allreduce(x, y, "sum", in_group=True)
out["group_sum"] = every(y)
g = sess.empty((3 * N, 4), "float32")
sess.allgather(x, g, in_group=False)
out["allgather"] = every(g)
sess.broadcast_from_worker0(x, y, in_group=False)
out["broadcast"] = every(y)
piece = sess.scatter(np.arange(N * 6, dtype="int32").reshape(N, 2, 3), in_group=False)
out["scatter"] = every(piece)
at0 = sess.empty((N, 2, 3), "int32", worker0_only=True, in_group=False)
sess.gather_to_worker0(piece, at0, in_group=False)
out["gather"] = at0.debug_get_from_remote(0).numpy().tolist()
z = sess.empty((3, 4), "float32")
sess.call_packed(sess.get_global_func("testing.disco.exchange"), x, z)
out["exchange"] = z.debug_get_from_remote(N - 1).numpy().tolist()
sess._sync_all()
sess.shutdown()
import gc; gc.collect()
out["parts"] = [p.tolist() for p in parts]
out["live_comms_after_shutdown"] = fake.fake_nccl_live_comms()
out["log"] = fake.fake_nccl_log().decode()
print("RESULT:" + json.dumps(out))
"""


def run_fake_collectives(ccl: str, n: int, groups: int, env: dict[str, str]) -> dict[str, Any]:
    code = SCRIPT.format(ccl=ccl, n=n, groups=groups)
    full_env = {"PYTHONPATH": pythonpath(HELPERS), **env}
    proc = run_python(textwrap.dedent(code), env=full_env)
    return child_result(proc)


def check_fake_collectives(r: dict[str, Any], n: int, groups: int, device_type: int) -> None:
    """Results equal numpy's, and the fake saw what NCCL must see."""
    import numpy as np

    parts = np.array(r["parts"], dtype="float64")
    assert r["devices"] == [[device_type, w] for w in range(n)]  # workers allocate on their GPU
    for op, ref in (("sum", np.sum), ("prod", np.prod), ("min", np.min), ("max", np.max), ("avg", np.mean)):
        for got in r[op]:
            np.testing.assert_allclose(got, ref(parts, axis=0), rtol=1e-6, err_msg=op)
    size = n // groups
    for w, got in enumerate(r["group_sum"]):
        g = w // size
        np.testing.assert_allclose(got, parts[g * size : (g + 1) * size].sum(0), err_msg=f"group of {w}")
    for got in r["allgather"]:
        np.testing.assert_array_equal(got, np.concatenate(parts))
    for got in r["broadcast"]:
        np.testing.assert_array_equal(got, parts[0])
    whole = np.arange(n * 6).reshape(n, 2, 3)
    for w, got in enumerate(r["scatter"]):
        np.testing.assert_array_equal(got, whole[w])
    np.testing.assert_array_equal(r["gather"], whole)
    np.testing.assert_array_equal(r["exchange"], parts[0])

    log = r["log"]
    inits = parse_log(log, "init")
    assert sorted(int(e["rank"]) for e in inits) == list(range(n))
    for e in inits:  # each worker joined on its own GPU
        assert e["nranks"] == str(n) and e["device"] == e["rank"]
    assert len({e["id"] for e in inits}) == 1  # one unique id, from the controller
    splits = parse_log(log, "split")
    if groups > 1:
        assert sorted((int(e["rank"]), int(e["color"]), int(e["new_rank"])) for e in splits) == [
            (w, w // size, w % size) for w in range(n)
        ]
    else:
        assert splits == []
    reduces = parse_log(log, "allreduce")
    # NCCL numbers its ops sum 0, prod 1, max 2, min 3, avg 4 (0.27's ReduceKind: min 2, max 3).
    ops = [int(e["op"]) for e in reduces if e["rank"] == "0"]
    assert ops[:5] == [0, 1, 3, 2, 4], ops
    for kind in ("allreduce", "allgather", "broadcast", "send", "recv"):
        for e in parse_log(log, kind):
            assert e["device"] != "-1" and e["stream"] in ("(nil)", "0x0"), e
            assert e["dtype"] in ("7", "2"), e  # float32, int32
    assert "error" not in log
    assert r["live_comms_after_shutdown"] == 0


# The fake driver each collective library runs on (tests/fakes), the name the fake NCCL is built
# under, and the variables that point the backend at the driver, the library and the device count.
_CCL = {
    "nccl": ("cuda", "libnccl_fake.so.2", "TVM_CUDA_DRIVER_LIBRARY", "TVM_NCCL_LIBRARY", "FAKE_CUDA_DEVICES"),
    "rccl": ("hip", "librccl_fake.so.1", "TVM_ROCM_LIBRARY", "TVM_RCCL_LIBRARY", "FAKE_HIP_DEVICES"),
}


def fake_env(ccl: str, devices: int, **extra: str) -> dict[str, str]:
    """The environment of a child process on the fake driver and the fake NCCL standing in for
    `ccl` ("nccl" or "rccl"): the backend opens both through its variables, the fake NCCL asks
    the fake driver which device is current."""
    driver_fake, filename, driver_var, library_var, devices_var = _CCL[ccl]
    driver, nccl = str(fakes.build(driver_fake)), str(fakes.build("nccl", filename=filename))
    return {
        driver_var: driver,
        devices_var: str(devices),
        library_var: nccl,
        "FAKE_NCCL_PATH": nccl,
        "FAKE_NCCL_DEVICE_LIBRARY": driver,
        "FAKE_NCCL_DEVICE_SYMBOL": f"fake_{driver_fake}_current_device",
        **extra,
    }


def init_error(ccl: str, env: dict[str, str], device_ids: str = "0, 1") -> str:
    """What init_ccl(ccl, ...) raises in a 2-worker ThreadedSession: "ERROR <type> <message>"."""
    return run_python(
        f"""
        from tvm.backend.extra import disco
        sess = disco.ThreadedSession(2)
        try:
            sess.init_ccl({ccl!r}, {device_ids})
        except Exception as err:
            print("ERROR", type(err).__name__, err)
        sess.shutdown()
        """,
        env=env,
    ).stdout
